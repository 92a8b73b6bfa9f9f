package cloudsync

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestWatchEpochAlignsDeadlines: watches opened at different moments end
// at the same boundary, each lasts at least minEpochWatch, and none lasts
// more than a period and that minimum.
func TestWatchEpochAlignsDeadlines(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	clk := clocktesting.NewFakePassiveClock(start)
	e := NewWatchEpoch(clk)
	if e.period < minWatchTimeout || e.period >= 2*minWatchTimeout {
		t.Fatalf("got a period of %v, want 5 to 10 minutes", e.period)
	}
	boundary := start.Add(e.period)
	for _, tc := range []struct {
		name string
		at   time.Duration // after the origin
		want time.Time
	}{
		{"at the origin", 0, boundary},
		{"a moment later", 1500 * time.Millisecond, boundary},
		{"midway", e.period / 2, boundary},
		{"within a minute of the boundary", e.period - 30*time.Second, boundary.Add(e.period)},
		{"just past the boundary", e.period + time.Second, boundary.Add(e.period)},
		{"three periods on", 3*e.period + 2*time.Minute, start.Add(4 * e.period)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := start.Add(tc.at)
			clk.SetTime(now)
			end := now.Add(time.Duration(e.Timeout()) * time.Second)
			if end.Before(tc.want) || end.Sub(tc.want) >= time.Second {
				t.Errorf("got a watch opened at +%v ending at +%v, want it ending within a second after +%v",
					tc.at, end.Sub(start), tc.want.Sub(start))
			}
			if d := end.Sub(now); d < minEpochWatch || d > e.period+minEpochWatch+time.Second {
				t.Errorf("got a watch of %v, want %v to %v", d, minEpochWatch, e.period+minEpochWatch)
			}
		})
	}
}
