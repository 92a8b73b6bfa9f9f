package link

import (
	"context"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// RelistDelay spreads over the configured window, or over the cloud's
// last Retry-After while it is recent and longer.
func TestRelistDelaySpread(t *testing.T) {
	for _, tt := range []struct {
		name       string
		spread     time.Duration
		retryAfter time.Duration
		age        time.Duration // of the Retry-After
		want       time.Duration // the window
	}{
		{"default", 0, 0, 0, DefaultRelistSpread},
		{"configured", 20 * time.Second, 0, 0, 20 * time.Second},
		{"a longer Retry-After", 2 * time.Second, 9 * time.Second, time.Second, 9 * time.Second},
		{"a shorter Retry-After", 20 * time.Second, 9 * time.Second, time.Second, 20 * time.Second},
		{"an old Retry-After", 2 * time.Second, 9 * time.Second, retryAfterMemory, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
			l := New(Config{Probe: func(context.Context) error { return nil }, RelistSpread: tt.spread, Clock: clk})
			l.noteRetryAfter(tt.retryAfter)
			clk.Step(tt.age)
			seen := map[time.Duration]bool{}
			for range 1000 {
				d := l.RelistDelay()
				if d < 0 || d >= tt.want {
					t.Fatalf("got %v, want within [0, %v)", d, tt.want)
				}
				seen[d.Truncate(tt.want/10)] = true
			}
			if len(seen) < 8 {
				t.Errorf("got %d of 10 tenths of [0, %v) used, want the delays spread over it", len(seen), tt.want)
			}
		})
	}
}
