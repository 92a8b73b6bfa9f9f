package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"
)

const pods = "/v1/pods"

// scrape returns the /metrics text.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: got %d, want 200", rec.Code)
	}
	return rec.Body.String()
}

func mustContain(t *testing.T, body string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(body, l+"\n") {
			t.Errorf("scrape lacks %q", l)
		}
	}
}

func TestSyncMetricsMove(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	stats := ResourceStats{Resource: pods, Ready: true, RV: 41, Objects: 3, Events: 2, Watchers: 1}
	link, watches := false, 0
	m := New(clk, Sources{
		Resources:    func() []ResourceStats { return []ResourceStats{stats} },
		LinkUp:       func() bool { return link },
		CloudWatches: func() int { return watches },
	})
	body := scrape(t, m)
	mustContain(t, body,
		`apiserver_watch_cache_resource_version{resource="/v1/pods"} 41`,
		`apiserver_storage_objects{resource="/v1/pods"} 3`,
		`apiserver_lite_watchers{resource="/v1/pods"} 1`,
		`apiserver_lite_cloud_link_up 0`,
		`apiserver_lite_cloud_watches 0`)
	if !strings.Contains(body, `apiserver_lite_staleness_seconds{resource="/v1/pods"} 0`+"\n") {
		t.Errorf("got no staleness of 0 at start before the cloud was heard, want one")
	}
	clk.Step(time.Hour)
	mustContain(t, scrape(t, m), `apiserver_lite_staleness_seconds{resource="/v1/pods"} 3600`)

	m.CloudHeard(pods)
	clk.Step(7 * time.Second)
	m.Relisted(pods, "expired")
	m.CloudError(pods, apierrors.NewGone("too old"))
	m.CloudError(pods, errors.New("dial tcp: connection refused"))
	start := m.CommitStarted()
	clk.Step(3 * time.Millisecond)
	m.CommitDone(pods, start, 5, nil)
	m.CommitDone(pods, m.CommitStarted(), 2, errors.New("disk full"))
	stats.RV, stats.TooSlow, link, watches = 50, 2, true, 66

	mustContain(t, scrape(t, m),
		`apiserver_watch_cache_resource_version{resource="/v1/pods"} 50`,
		`apiserver_lite_staleness_seconds{resource="/v1/pods"} 7.003`,
		`apiserver_lite_relists_total{reason="expired",resource="/v1/pods"} 1`,
		`apiserver_lite_cloud_errors_total{code="410",resource="/v1/pods"} 1`,
		`apiserver_lite_cloud_errors_total{code="transport",resource="/v1/pods"} 1`,
		`apiserver_lite_commit_errors_total{resource="/v1/pods"} 1`,
		`apiserver_lite_commit_duration_seconds_count{resource="/v1/pods"} 2`,
		`apiserver_watch_cache_events_received_total{resource="/v1/pods"} 5`,
		`apiserver_terminated_watchers_total{resource="/v1/pods"} 2`,
		`apiserver_lite_cloud_link_up 1`,
		`apiserver_lite_cloud_watches 66`)
	if e, ok := m.LastError(pods); !ok || e.Code != codeTransport {
		t.Errorf("last error: got %+v %v, want a transport error", e, ok)
	}
	if err, inFlight := m.CommitState(); err == nil || inFlight != 0 {
		t.Errorf("commit state: got %v %v, want the disk-full error and none in flight", err, inFlight)
	}
}

func TestRequestMetrics(t *testing.T) {
	m := New(clocktesting.NewFakeClock(time.Unix(0, 0)), Sources{})
	h := m.Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = io.WriteString(w, "x")
	}), "loopback", func(gr string) bool { return gr == "pods" || gr == "leases.coordination.k8s.io" })
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/pods/p", nil),
		httptest.NewRequest(http.MethodGet, "/api/v1/pods?watch=true", nil),
		httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil),
		httptest.NewRequest(http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", nil),
		httptest.NewRequest(http.MethodGet, "/api/v1/made-up-1", nil),
		httptest.NewRequest(http.MethodGet, "/healthz", nil),
	} {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	for _, tc := range []struct{ verb, res, code string }{
		{"get", "pods", "200"}, {"watch", "pods", "200"}, {"list", "pods", "200"},
		{"create", "leases.coordination.k8s.io", "503"}, {"list", resourceOther, "200"}, {"get", "", "200"},
	} {
		got := testutil.ToFloat64(m.requests.WithLabelValues(tc.verb, tc.res, tc.code, "loopback"))
		if got != 1 {
			t.Errorf("requests{%s,%s,%s}: got %v, want 1", tc.verb, tc.res, tc.code, got)
		}
	}
	if n := testutil.CollectAndCount(m.requestSecs); n != 6 {
		t.Errorf("duration series: got %d, want 6", n)
	}
}

func TestRequestInfo(t *testing.T) {
	tests := []struct{ method, path, verb, gr string }{
		{"GET", "/api/v1/namespaces", "list", "namespaces"},
		{"GET", "/api/v1/namespaces/default", "get", "namespaces"},
		{"GET", "/api/v1/namespaces/default/configmaps", "list", "configmaps"},
		{"DELETE", "/api/v1/namespaces/default/configmaps", "deletecollection", "configmaps"},
		{"PATCH", "/api/v1/nodes/n1/status", "patch", "nodes"},
		{"PUT", "/apis/apps/v1/namespaces/x/deployments/d", "update", "deployments.apps"},
		{"GET", "/version", "get", ""},
		{"GET", "/apis/apps/v1", "get", ""},
		{"GET", "/api/v1/namespaces/a/configmaps/c", "get", "configmaps"},
		{"GET", "/api/v1/watch/namespaces/a/configmaps", "watch", "configmaps"},
		{"GET", "/api/v1/namespaces/a/pods?watch=1&fieldSelector=metadata.name%3Dp", "watch", "pods"},
		{"OPTIONS", "/api/v1/namespaces/a/pods", verbOther, "pods"},
		{"FOOBAR", "/healthz", verbOther, ""},
		{"OPTIONS", "/healthz", "options", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			v, gr := RequestInfo(httptest.NewRequest(tt.method, tt.path, nil))
			if v != tt.verb || gr != tt.gr {
				t.Errorf("got %s %q, want %s %q", v, gr, tt.verb, tt.gr)
			}
		})
	}
}

// With overlapping commits, the oldest one still in flight is reported.
func TestCommitStateReportsOldestInFlight(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	m := New(clk, Sources{})
	hung := m.CommitStarted()
	clk.Step(time.Minute)
	quick := m.CommitStarted()
	clk.Step(time.Second)
	m.CommitDone(pods, quick, 1, nil)
	if _, got := m.CommitState(); got != time.Minute+time.Second {
		t.Errorf("oldest in flight: got %v, want 1m1s", got)
	}
	m.CommitDone(pods, hung, 1, nil)
	if _, got := m.CommitState(); got != 0 {
		t.Errorf("after both ended: got %v, want 0", got)
	}
}

// A resource held only on request and not held now has no staleness;
// one never heard from is as stale as the daemon is old.
func TestStalenessOfIdleAndNeverHeard(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	m := New(clk, Sources{Resources: func() []ResourceStats {
		return []ResourceStats{{Resource: "endpointslices.discovery.k8s.io", Idle: true}, {Resource: "services"}}
	}})
	clk.Step(10 * time.Minute)
	body := scrape(t, m)
	mustContain(t, body, `apiserver_lite_staleness_seconds{resource="services"} 600`)
	if strings.Contains(body, `apiserver_lite_staleness_seconds{resource="endpointslices.discovery.k8s.io"}`) {
		t.Errorf("got a staleness sample for a resource not held, want none")
	}
	if age, heard := m.Staleness("services"); heard || age != 10*time.Minute {
		t.Errorf("got %s, heard %v, want 10m0s never heard", age, heard)
	}
}
