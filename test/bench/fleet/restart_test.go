//go:build e2e

package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// flowMetricsSample is kube-apiserver's API Priority and Fairness metrics
// as /metrics writes them.
const flowMetricsSample = `# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem
apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 120
apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"} 30
apiserver_flowcontrol_dispatched_requests_total{flow_schema="probes",priority_level="exempt"} 5
apiserver_flowcontrol_rejected_requests_total{flow_schema="system-nodes",priority_level="system",reason="queue-full"} 4
apiserver_flowcontrol_rejected_requests_total{flow_schema="system-nodes",priority_level="system",reason="time-out"} 1
apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="system-nodes",priority_level="system",le="0.1"} 9
apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="system-nodes",priority_level="system"} 2.5
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",flow_schema="system-nodes",priority_level="system"} 10
apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="false",flow_schema="system-nodes",priority_level="system"} 99
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="false",flow_schema="system-nodes",priority_level="system"} 5
apiserver_flowcontrol_current_inqueue_requests{flow_schema="system-nodes",priority_level="system"} 7
`

// TestParseFlowLevels reads the priority levels' counters the daemon
// restart's report shows, summed over flow schemas, executed waits only.
func TestParseFlowLevels(t *testing.T) {
	got, err := parseFlowLevels([]byte(flowMetricsSample))
	if err != nil {
		t.Fatal(err)
	}
	want := flowLevels{"exempt": {dispatched: 125}, "system": {dispatched: 30, rejected: 5, waited: 10, waitSum: 2.5}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseFlowLevels: got %+v, want %+v", got, want)
	}
	before := flowLevels{"exempt": {dispatched: 100}, "system": {dispatched: 30, rejected: 5, waited: 10, waitSum: 2.5}}
	moved := got.minus(before)
	if want := (flowLevels{"exempt": {dispatched: 25}}); fmt.Sprint(moved) != fmt.Sprint(want) {
		t.Errorf("minus: got %+v, want %+v (the levels that moved only)", moved, want)
	}
	for _, bad := range []string{
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} x`,
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt"} 1`,
	} {
		if _, err := parseFlowLevels([]byte(bad)); err == nil {
			t.Errorf("parseFlowLevels(%q): got no error, want one", bad)
		}
	}
}

// TestParseMachineCPU reads the machine's busy and total ticks.
func TestParseMachineCPU(t *testing.T) {
	stat := "cpu  100 10 50 800 40 5 5 0 30 0\ncpu0 50 5 25 400 20 2 3 0 15 0\nintr 1\n"
	busy, all, err := parseMachineCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	// busy: user, nice, system, irq, softirq, steal; all adds idle and iowait.
	if want := 1700 * time.Millisecond; busy != want {
		t.Errorf("busy: got %v, want %v", busy, want)
	}
	if want := 10100 * time.Millisecond; all != want {
		t.Errorf("all: got %v, want %v", all, want)
	}
	for _, bad := range []string{"cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3\n", "cpu 1 2 3 x 5 6 7 8\n", "cpu 1 2 3 -4 5 6 7 8\n"} {
		if _, _, err := parseMachineCPU([]byte(bad)); err == nil {
			t.Errorf("parseMachineCPU(%q): got no error, want one", bad)
		}
	}
}

// TestSharesBetween: cores used between two marks, and what the listed
// processes leave of the machine's busy time.
func TestSharesBetween(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := cpuMark{at: t0, api: 10 * time.Second, busy: 100 * time.Second, all: 200 * time.Second}
	b := cpuMark{at: t0.Add(2 * time.Second), daemons: time.Second, api: 12 * time.Second, etcd: 500 * time.Millisecond,
		bench: 500 * time.Millisecond, busy: 104.8 * 1e9, all: 204 * time.Second}
	got := sharesBetween(a, b)
	want := cpuShares{elapsed: 2 * time.Second, daemons: 0.5, api: 1, etcd: 0.25, bench: 0.25, others: 0.4, busy: 2.4, cores: 2}
	if fmt.Sprintf("%.3f", []float64{got.daemons, got.api, got.etcd, got.bench, got.others, got.busy, got.cores}) !=
		fmt.Sprintf("%.3f", []float64{want.daemons, want.api, want.etcd, want.bench, want.others, want.busy, want.cores}) || got.elapsed != want.elapsed {
		t.Errorf("sharesBetween: got %+v, want %+v", got, want)
	}
	if got := sharesBetween(b, b); got != (cpuShares{}) {
		t.Errorf("sharesBetween of one moment: got %+v, want nothing", got)
	}
}

// TestSummarizeChange reads the change's wire times against the first
// SIGTERM.
func TestSummarizeChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ts := []createTiming{
		{called: at(1), sent: at(2), answered: at(1002), slowest: 900 * time.Millisecond, attempts: 3, code: 201, levelUID: "u-exempt"},
		{called: at(3), sent: at(300), answered: at(12500), slowest: 12 * time.Second, attempts: 4, code: 201, levelUID: "u-exempt"},
		{called: at(2), sent: at(5), answered: at(3005), slowest: 2 * time.Second, attempts: 3, code: 201, levelUID: "u-workload"},
	}
	got := summarizeChange(t0, ts)
	want := changeSummary{creates: 3, firstCalled: time.Millisecond, lastSent: 300 * time.Millisecond, firstAnswered: 1002 * time.Millisecond,
		lastAnswered: 12500 * time.Millisecond, medianLatency: 3 * time.Second, maxLatency: 12200 * time.Millisecond, slowest: 12 * time.Second,
		retried: 1, levelUIDs: []string{"u-exempt", "u-workload"}}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("summarizeChange:\ngot  %+v\nwant %+v", got, want)
	}
	if err := got.check(); err != nil {
		t.Errorf("check: got %v, want none", err)
	}
	ts[1] = createTiming{called: at(3), err: errors.New("create secret fleet-001-d: context deadline exceeded")}
	if err := summarizeChange(t0, ts).check(); err == nil || !strings.Contains(err.Error(), "1 of the change's 3 creates failed") {
		t.Errorf("check with a failed create: got %v, want one failed", err)
	}
	ts[1] = createTiming{}
	if err := summarizeChange(t0, ts).check(); err == nil || !strings.Contains(err.Error(), "1 of the change's 3 nodes' creates never sent") {
		t.Errorf("check with a part never sent: got %v, want one never sent", err)
	}
}

// TestLeaseCause names a failed renewal's error the same way on every
// node: its HTTP status when one was answered, its addresses replaced.
func TestLeaseCause(t *testing.T) {
	lease := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"conflict", apierrors.NewConflict(lease, "fleet-007", errors.New("the object has been modified")),
			`HTTP 409 Conflict: Operation cannot be fulfilled on leases.coordination.k8s.io "NODE": the object has been modified`},
		{"unavailable", apierrors.NewServiceUnavailable("the cloud link is down"), "HTTP 503 ServiceUnavailable: the cloud link is down"},
		{"refused", fmt.Errorf("renew: %w", &url.Error{Op: "Put", URL: "https://127.0.0.1:40123/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fleet-001",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40123}, Err: errors.New("connection refused")}}),
			`no HTTP status: Put: dial tcp ADDR: connection refused`},
		{"other", errors.New("lease fleet-042 on [::1]:6443 lost"), "no HTTP status: lease NODE on ADDR lost"},
		{"long", errors.New(strings.Repeat("x", 300)), "no HTTP status: " + strings.Repeat("x", leaseCauseMax-len("no HTTP status: ")) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := leaseCause(tt.err); got != tt.want {
				t.Errorf("leaseCause: got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLeaseFailuresByPhase: a failure counts and is kept in the phase the
// run is in, a round's start apart from the steady state, and the report
// says why each phase's renewals failed.
func TestLeaseFailuresByPhase(t *testing.T) {
	r := soundFleet()
	r.enterStep("apiserver-lite steady state, round 2")
	r.enterPhase(phaseRoundStart)
	r.leaseFails[bench.LiteSide].fail("fleet-003", apierrors.NewServiceUnavailable("not ready"))
	r.leaseFails[bench.LiteSide].fail("fleet-004", apierrors.NewServiceUnavailable("not ready"))
	r.enterPhase(phaseSteady)
	r.leaseFails[bench.KubeSide].fail("fleet-005", errors.New("http2: client connection lost"))
	for _, c := range []struct {
		side  int
		phase leasePhase
		want  int64
	}{{bench.LiteSide, phaseRoundStart, 2}, {bench.LiteSide, phaseSteady, 0}, {bench.KubeSide, phaseSteady, 1}, {bench.KubeSide, phaseRoundStart, 0}} {
		if got := r.leaseFails[c.side].in(c.phase); got != c.want {
			t.Errorf("%s, %s: got %d failures, want %d", sideLabel(c.side), leasePhaseNames[c.phase], got, c.want)
		}
	}
	var b bytes.Buffer
	r.writeMarkdown(&b)
	for _, w := range []string{
		"| round start | 2 | 0 |",
		"| steady state | 0 | 1 |",
		"Failed Lease renewals, round start, apiserver-lite side: 2 (2 kept with their error):",
		"- 2 × `HTTP 503 ServiceUnavailable: not ready`",
		`- fleet-003, `,
		`(step "apiserver-lite steady state, round 2"): ` + "`HTTP 503 ServiceUnavailable: not ready`",
		"Failed Lease renewals, steady state, direct side: 1",
		"- 1 × `no HTTP status: http2: client connection lost`",
		"no failed Lease renewal | yes (0 failed) |",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report: got\n%s\nwant it to contain %q", b.String(), w)
		}
	}
}

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
			var b bytes.Buffer
			r.writeMarkdown(&b)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("report: got\n%s\nwant it to contain %q", b.String(), w)
				}
			}
		})
	}
}

// TestRebootWindowReport: the window's CPU table, priority levels and the
// change's timeline reach the report.
func TestRebootWindowReport(t *testing.T) {
	r := soundFleet()
	r.rebootWindow.flow = flowLevels{"exempt": {dispatched: 300}, "system": {dispatched: 40, rejected: 2, waited: 4, waitSum: 2}}
	r.rebootWindow.change.medianLatency = 1200 * time.Millisecond
	var b bytes.Buffer
	r.writeMarkdown(&b)
	for _, w := range []string{
		"| every apiserver-lite, old and new, summed | 1.00 | 1.00 | 1.00 |",
		"| **whole machine busy** | 1.00 | 1.00 | 1.00 |",
		"| whole machine's capacity | 2.00 | 2.00 | 2.00 |",
		"| `exempt` (the change's creates) | 300 | 0 | 0 | – |",
		"| `system` | 40 | 2 | 4 | 0.500 s |",
		"the cloud answered the first node's last create at 0s and the last node's at 500ms (the change made). A node's creates took 1.2s (median)",
		"priority level `exempt`.",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report: got\n%s\nwant it to contain %q", b.String(), w)
		}
	}
}

// FuzzRestartParsers: the daemon restart's parsers of kube-apiserver's
// metrics and /proc/stat never panic.
func FuzzRestartParsers(f *testing.F) {
	f.Add([]byte(flowMetricsSample))
	f.Add([]byte("cpu  100 10 50 800 40 5 5 0 30 0\n"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = parseFlowLevels(data)
		_, _, _ = parseMachineCPU(data)
	})
}
