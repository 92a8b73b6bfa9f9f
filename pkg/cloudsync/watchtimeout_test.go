package cloudsync

import (
	"testing"
	"time"
)

// A watch opened at any moment ends on the next point of the grid at
// least minWatchTimeout away, within the second after it, so every watch
// of a node ends (and reopens) in the same second however apart they were
// opened; a timeout stays within client-go's 5 to 10 minutes.
func TestWatchTimeoutOnGrid(t *testing.T) {
	grid := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		now  time.Time
		want int64 // seconds
	}{
		{"on a grid point", grid, 300},
		{"just after one", grid.Add(time.Second), 599},
		{"a fraction before the next", grid.Add(4*time.Minute + 59*time.Second + 500*time.Millisecond), 301},
		{"between two", grid.Add(7 * time.Minute), 480},
		{"before the grid's phase, on a point", grid.Add(-time.Hour), 300},
		{"before the grid's phase, between two", grid.Add(-54 * time.Minute), 540},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := watchTimeoutOn(grid, tt.now); got != tt.want {
				t.Errorf("got %d s, want %d s", got, tt.want)
			}
		})
	}
	// Every moment of two periods: within 5 to 10 minutes, ending within
	// the second after a grid point.
	for now := grid.Add(-minWatchTimeout); now.Before(grid.Add(minWatchTimeout)); now = now.Add(333 * time.Millisecond) {
		got := time.Duration(watchTimeoutOn(grid, now)) * time.Second
		if got < minWatchTimeout || got > 2*minWatchTimeout {
			t.Fatalf("opened at %s: got %s, want 5 to 10 minutes", now.Sub(grid), got)
		}
		if past := now.Add(got).Sub(grid) % minWatchTimeout; past < 0 || past >= time.Second {
			t.Fatalf("opened at %s: ends %s after a grid point, want under 1s", now.Sub(grid), past)
		}
	}
}
