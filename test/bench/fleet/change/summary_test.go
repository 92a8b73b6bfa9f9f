//go:build e2e

package change

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSummarizeChange reads the change's wire times against the first
// SIGTERM.
func TestSummarizeChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ts := []Timing{
		{Called: at(1), sent: at(2), answered: at(1002), slowest: 900 * time.Millisecond, attempts: 3, code: 201, levelUID: "u-exempt"},
		{Called: at(3), sent: at(300), answered: at(12500), slowest: 12 * time.Second, attempts: 4, code: 201, levelUID: "u-exempt"},
		{Called: at(2), sent: at(5), answered: at(3005), slowest: 2 * time.Second, attempts: 3, code: 201, levelUID: "u-workload"},
	}
	got := Summarize(t0, ts)
	want := Summary{Creates: 3, FirstCalled: time.Millisecond, LastSent: 300 * time.Millisecond, FirstAnswered: 1002 * time.Millisecond,
		LastAnswered: 12500 * time.Millisecond, MedianLatency: 3 * time.Second, MaxLatency: 12200 * time.Millisecond, Slowest: 12 * time.Second,
		Retried: 1, LevelUIDs: []string{"u-exempt", "u-workload"}}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Summarize:\ngot  %+v\nwant %+v", got, want)
	}
	if err := got.Check(); err != nil {
		t.Errorf("Check: got %v, want none", err)
	}
	ts[1] = Timing{Called: at(3), Err: errors.New("create secret fleet-001-d: context deadline exceeded")}
	if err := Summarize(t0, ts).Check(); err == nil || !strings.Contains(err.Error(), "1 of the change's 3 creates failed") {
		t.Errorf("Check with a failed create: got %v, want one failed", err)
	}
	ts[1] = Timing{}
	if err := Summarize(t0, ts).Check(); err == nil || !strings.Contains(err.Error(), "1 of the change's 3 nodes' creates never sent") {
		t.Errorf("Check with a part never sent: got %v, want one never sent", err)
	}
}
