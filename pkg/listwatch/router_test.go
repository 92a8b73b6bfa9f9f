package listwatch

import (
	"encoding/json"
	"net/http"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

func TestRouting(t *testing.T) {
	f := newFixture(t)
	cloud := newFakeCloud(t)
	srv := MustServer(t, Config{Caches: f.caches(), Cloud: cloud.config()})
	tests := []struct {
		name, method, path string
		wantKind           string // kind of the local answer; "" means the cloud answers
	}{
		{"all-namespace collection", "GET", "/api/v1/pods", "PodList"},
		{"namespaced collection", "GET", "/api/v1/namespaces/default/pods", "PodList"},
		{"namespaced object", "GET", "/api/v1/namespaces/default/pods/web-1", "Pod"},
		{"namespace object", "GET", "/api/v1/namespaces/default", "Namespace"},
		{"namespace collection", "GET", "/api/v1/namespaces", "NamespaceList"},
		{"cluster-scoped object", "GET", "/api/v1/nodes/node-a", "Node"},
		{"cluster-scoped collection", "GET", "/api/v1/nodes", "NodeList"},
		{"group object", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a", "Lease"},
		{"group collection", "GET", "/apis/coordination.k8s.io/v1/leases", "LeaseList"},
		{"HEAD is a read", "HEAD", "/api/v1/namespaces/default/pods/web-1", "-"},
		{"namespace subresource", "GET", "/api/v1/namespaces/default/status", ""},
		{"namespace finalize", "PUT", "/api/v1/namespaces/default/finalize", ""},
		{"pod subresource read", "GET", "/api/v1/namespaces/default/pods/web-1/log", ""},
		{"unconfigured resource", "GET", "/api/v1/namespaces/default/secrets", ""},
		{"cluster-scoped resource under a namespace", "GET", "/api/v1/namespaces/default/nodes", ""},
		{"namespaced object without namespace", "GET", "/api/v1/pods/web-1", ""},
		{"cluster-scoped object under a namespace", "GET", "/api/v1/namespaces/default/nodes/node-a", ""},
		{"trailing slash", "GET", "/api/v1/pods/", ""},
		{"empty namespace", "GET", "/api/v1/namespaces//pods", ""},
		{"unconfigured group", "GET", "/apis/apps/v1/deployments", ""},
		{"unconfigured version", "GET", "/apis/coordination.k8s.io/v1beta1/leases", ""},
		{"create", "POST", "/api/v1/namespaces/default/pods", ""},
		{"update lease", "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a", ""},
		{"patch status", "PATCH", "/api/v1/namespaces/default/pods/web-1/status", ""},
		{"delete", "DELETE", "/api/v1/namespaces/default/configmaps/settings", ""},
		{"token request", "POST", "/api/v1/namespaces/default/serviceaccounts/default/token", ""},
		{"event", "POST", "/apis/events.k8s.io/v1/namespaces/default/events", ""},
		{"openapi", "GET", "/openapi/v2", ""},
		{"unknown path", "GET", "/logs/kube-apiserver.log", ""},
		{"write to health path", "POST", "/healthz", "404"},
		{"metrics", "GET", "/metrics", "404"},
		{"profiles", "GET", "/debug/pprof/heap", "404"},
		{"deprecated watch path", "GET", "/api/v1/watch/pods", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(cloud.requests())
			r := MustDo(t, tt.method, srv.URL+tt.path, nil, "")
			proxied := len(cloud.requests()) > before
			if tt.wantKind == "" {
				checkProxied(t, cloud, r, proxied, tt.method, tt.path)
				return
			}
			if tt.wantKind == "404" { // the daemon's own paths: never forwarded
				if proxied || r.code != http.StatusNotFound {
					t.Fatalf("got status %d (proxied %v), want a local 404", r.code, proxied)
				}
				return
			}
			if proxied || r.code != http.StatusOK {
				t.Fatalf("got status %d (proxied %v), want 200 served locally", r.code, proxied)
			}
			if tt.wantKind == "-" {
				return
			}
			var obj struct{ Kind string }
			if err := json.Unmarshal([]byte(r.body), &obj); err != nil {
				t.Fatalf("decode %q: %v", r.body, err)
			}
			if obj.Kind != tt.wantKind {
				t.Errorf("got kind %q, want %q", obj.Kind, tt.wantKind)
			}
		})
	}
}

func checkProxied(t *testing.T, cloud *fakeCloud, r reply, proxied bool, method, path string) {
	t.Helper()
	if !proxied || r.code != http.StatusCreated || r.body != cloudAnswer {
		t.Fatalf("got status %d body %q (proxied %v), want the cloud's 201", r.code, r.body, proxied)
	}
	reqs := cloud.requests()
	last := reqs[len(reqs)-1]
	if last.method != method || last.path != path {
		t.Errorf("cloud got %s %s, want %s %s", last.method, last.path, method, path)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	pods := MustCache(t, podsGVR, 1)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"nil cache", Config{Caches: []*versioncache.Cache{nil}}},
		{"duplicate resource", Config{Caches: []*versioncache.Cache{pods, MustCache(t, podsGVR, 1)}}},
		{"bad cloud host", Config{Cloud: &rest.Config{Host: "http://[::1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Errorf("got no error, want one")
			}
		})
	}
}
