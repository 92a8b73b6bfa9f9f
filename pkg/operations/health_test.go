package operations

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

func newTestView(clk *clocktesting.FakeClock) *View {
	o := &View{clock: clk, maxStaleness: time.Minute, link: func() bool { return true }}
	o.metrics = metrics.New(clk, metrics.Sources{})
	return o
}

func TestLivezFailsOnlyWhenWedged(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	tests := []struct {
		name  string
		setup func(o *View)
		want  string // "" means live
	}{
		{"idle", func(*View) {}, ""},
		{"short commit in flight", func(o *View) { o.metrics.CommitStarted(); clk.Step(time.Second) }, ""},
		{"hung commit", func(o *View) { o.metrics.CommitStarted(); clk.Step(wedgedCommit + time.Second) }, "[-]store-commit failed"},
		{"sync loop exited", func(o *View) { o.syncExited.Store(1) }, "[-]sync-loops failed: 1 sync loops exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestView(clk)
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

func TestDataLoadedCheck(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	moved := metastore.Recovery{Reason: "not a database", MovedTo: "/d/state.db.corrupt-1"}
	tests := []struct {
		name     string
		ready    bool
		recovery metastore.Recovery
		want     string // "" means passing
	}{
		{"loaded", true, metastore.Recovery{}, ""},
		{"loaded after recovery", true, moved, ""},
		{"never synced", false, metastore.Recovery{}, "never synced and nothing stored"},
		{"moved aside", false, moved, "moved to /d/state.db.corrupt-1 (not a database)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newTestView(clk)
			o.recovery = tt.recovery
			c := o.dataLoadedCheck("pods", tt.ready)
			switch {
			case tt.want == "" && c.err != nil:
				t.Errorf("got %v, want passing", c.err)
			case tt.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), tt.want)):
				t.Errorf("got %v, want an error with %q", c.err, tt.want)
			}
		})
	}
}

func TestStalenessCheck(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	o := newTestView(clk)
	if c := o.stalenessCheck("pods", true); c.err != nil || !strings.Contains(c.info, "never heard") {
		t.Errorf("never heard: got %+v, want ok with a note", c)
	}
	clk.Step(2 * time.Minute)
	if c := o.stalenessCheck("pods", true); c.err == nil || !strings.Contains(c.err.Error(), "2m0s since start, never heard") {
		t.Errorf("never heard past max-staleness online: got %+v, want a failure", c)
	}
	if c := o.stalenessCheck("pods", false); c.err != nil {
		t.Errorf("never heard offline: got %v, want ok", c.err)
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

// Concurrent /livez requests share one cache probe and all pass.
func TestLivezConcurrentProbes(t *testing.T) {
	o := newTestView(clocktesting.NewFakeClock(time.Unix(0, 0)))
	for _, r := range []string{"pods", "nodes"} {
		o.caches = append(o.caches, versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: r}, 10))
	}
	h := serveChecks("livez", o.livenessChecks)
	var wg sync.WaitGroup
	codes := make([]int, 20)
	for i := range codes {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez", nil))
			codes[i] = rec.Code
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: got %d, want 200", i, c)
		}
	}
}

// A whole copy held for pods beside a partial sync gets its own label.
func TestResourceLabels(t *testing.T) {
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	slices := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	got := resourceLabels([]cloudsync.Resource{
		{GVR: nodes, FieldSelector: "metadata.name=n1"}, {GVR: nodes, ForPods: true}, {GVR: slices, ForPods: true}})
	want := []string{"nodes", "nodes@cluster", "endpointslices.discovery.k8s.io"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
}
