package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	clocktesting "k8s.io/utils/clock/testing"
)

func newTestOps(clk *clocktesting.FakeClock) *ops {
	o := &ops{clock: clk, maxStaleness: time.Minute, link: func() bool { return true }}
	o.metrics = metrics.New(clk, metrics.Sources{})
	return o
}

func TestLivezFailsOnlyWhenWedged(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	tests := []struct {
		name  string
		setup func(o *ops)
		want  string // "" means live
	}{
		{"idle", func(*ops) {}, ""},
		{"short commit in flight", func(o *ops) { o.metrics.CommitStarted(); clk.Step(time.Second) }, ""},
		{"hung commit", func(o *ops) { o.metrics.CommitStarted(); clk.Step(wedgedCommit + time.Second) }, "[-]store-commit failed"},
		{"sync loop exited", func(o *ops) { o.syncExited.Store(1) }, "[-]sync-loops failed: 1 sync loops exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestOps(clk)
			tt.setup(o)
			rec := httptest.NewRecorder()
			serveChecks("livez", o.livenessChecks).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez", nil))
			body := rec.Body.String()
			switch {
			case tt.want == "" && (rec.Code != http.StatusOK || body != "ok"):
				t.Errorf("got %d %q, want 200 ok", rec.Code, body)
			case tt.want != "" && (rec.Code != http.StatusInternalServerError || !strings.Contains(body, tt.want)):
				t.Errorf("got %d %q, want 500 with %q", rec.Code, body, tt.want)
			}
		})
	}
}

func TestStalenessCheck(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	o := newTestOps(clk)
	if c := o.stalenessCheck("pods", true); c.err != nil || !strings.Contains(c.info, "not heard") {
		t.Errorf("never heard: got %+v, want ok with a note", c)
	}
	o.metrics.CloudHeard("pods")
	clk.Step(30 * time.Second)
	if c := o.stalenessCheck("pods", true); c.err != nil {
		t.Errorf("fresh: got %v, want ok", c.err)
	}
	clk.Step(time.Minute)
	if c := o.stalenessCheck("pods", true); c.err == nil || !strings.Contains(c.err.Error(), "max-staleness is 1m0s") {
		t.Errorf("stale online: got %+v, want a failure naming max-staleness", c)
	}
	if c := o.stalenessCheck("pods", false); c.err != nil || !strings.Contains(c.info, "1m30s behind, cloud unreachable") {
		t.Errorf("stale offline: got %+v, want ok with the age shown", c)
	}
}
