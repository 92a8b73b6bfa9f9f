//go:build e2e

package fleet

import (
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/apf"
)

// TestRebootCatchUpVerdict: the daemon restart's goal counts from the
// starts, however soon after the change was made every node served it.
func TestRebootCatchUpVerdict(t *testing.T) {
	for _, tt := range []struct {
		name              string
		caughtUp, changed time.Duration
		want              []string
	}{
		{"met", 6 * time.Second, 500 * time.Millisecond, []string{"within 10s of the starts (the first SIGTERM) | yes (6s;",
			"(its last create answered 500ms after the first SIGTERM) | 5.5s |"}},
		{"late create, quick daemons: missed", 15500 * time.Millisecond, 14100 * time.Millisecond, []string{
			"within 10s of the starts (the first SIGTERM) | **no** (15.5s;", "(its last create answered 14.1s after the first SIGTERM) | 1.4s |"}},
		{"just over", 10001 * time.Millisecond, time.Second, []string{"within 10s of the starts (the first SIGTERM) | **no** (10.001s;"}},
		{"not caught up", 0, time.Second, []string{"within 10s of the starts (the first SIGTERM) | **no** (0s;"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := soundFleet()
			r.reboot.caughtUp, r.reboot.changed = tt.caughtUp, tt.changed
			wantInReport(t, r, tt.want...)
		})
	}
}

// TestRebootWindowReport: the window's CPU table, priority levels and the
// change's timeline reach the report.
func TestRebootWindowReport(t *testing.T) {
	r := soundFleet()
	r.rebootWindow.flow = apf.Levels{"exempt": {Dispatched: 300}, "system": {Dispatched: 40, Rejected: 2, Waited: 4, WaitSum: 2}}
	r.rebootWindow.change.MedianLatency = 1200 * time.Millisecond
	wantInReport(t, r,
		"| every apiserver-lite, old and new, summed | 1.00 | 1.00 | 1.00 |",
		"| **whole machine busy** | 1.00 | 1.00 | 1.00 |",
		"| whole machine's capacity | 2.00 | 2.00 | 2.00 |",
		"| `exempt` (the change's creates) | 300 | 0 | 0 | – |",
		"| `system` | 40 | 2 | 4 | 0.500 s |",
		"the cloud answered the first node's last create at 0s and the last node's at 500ms (the change made). A node's creates took 1.2s (median)",
		"priority level `exempt`.",
	)
}
