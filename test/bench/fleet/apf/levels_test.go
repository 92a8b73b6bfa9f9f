//go:build e2e

package apf

import (
	"fmt"
	"testing"
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
	got, err := parse([]byte(flowMetricsSample))
	if err != nil {
		t.Fatal(err)
	}
	want := Levels{"exempt": {Dispatched: 125}, "system": {Dispatched: 30, Rejected: 5, Waited: 10, WaitSum: 2.5}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parse: got %+v, want %+v", got, want)
	}
	before := Levels{"exempt": {Dispatched: 100}, "system": {Dispatched: 30, Rejected: 5, Waited: 10, WaitSum: 2.5}}
	moved := got.Minus(before)
	if want := (Levels{"exempt": {Dispatched: 25}}); fmt.Sprint(moved) != fmt.Sprint(want) {
		t.Errorf("Minus: got %+v, want %+v (the levels that moved only)", moved, want)
	}
	for _, bad := range []string{
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} x`,
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt"} 1`,
	} {
		if _, err := parse([]byte(bad)); err == nil {
			t.Errorf("parse(%q): got no error, want one", bad)
		}
	}
}

// FuzzParseFlowLevels: the daemon restart's parser of kube-apiserver's
// metrics never panics.
func FuzzParseFlowLevels(f *testing.F) {
	f.Add([]byte(flowMetricsSample))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = parse(data)
	})
}
