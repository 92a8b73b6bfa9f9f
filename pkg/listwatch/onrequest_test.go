package listwatch

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// A resource held on request is the cloud's to answer while it is not
// held, is served locally once it is, and never fails readiness.
func TestOnRequestResource(t *testing.T) {
	f := newFixture(t)
	dormant := versioncache.New(leasesGVR, 0)
	t.Cleanup(dormant.Close)
	cloud := newFakeCloud(t)
	var current, online atomic.Bool
	current.Store(true)
	online.Store(true)
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{f.pods, dormant}, Cloud: cloud.config(),
		CloudConnected: online.Load,
		Scopes:         map[schema.GroupVersionResource]Scope{leasesGVR: {OnRequest: true}},
		Current:        func(schema.GroupVersionResource) bool { return current.Load() }})
	path := "/apis/coordination.k8s.io/v1/leases"

	r := MustGet(t, srv.URL+path)
	if r.code != http.StatusCreated || r.body != cloudAnswer {
		t.Errorf("list while not held: got %d %q, want the cloud's answer", r.code, r.body)
	}
	dormant.SetInfo(infos[leasesGVR])
	dormant.Replace([]*versioncache.Object{MustObject(t, leaseJSON("kube-node-lease", "node-a", 7))}, 30)
	r = MustGet(t, srv.URL+path)
	if r.code != http.StatusOK || !strings.Contains(r.body, `"node-a"`) {
		t.Errorf("list once held: got %d %q, want the held lease", r.code, r.body)
	}
	if got := len(cloud.requests()); got != 1 {
		t.Errorf("got %d cloud requests, want 1 (only the read while not held)", got)
	}
	current.Store(false) // no owner can sync
	r = MustGet(t, srv.URL+path)
	if r.code != http.StatusCreated || r.body != cloudAnswer {
		t.Errorf("list while held but not current, cloud up: got %d %q, want the cloud's answer", r.code, r.body)
	}
	online.Store(false)
	r = MustGet(t, srv.URL+path)
	if r.code != http.StatusOK || !strings.Contains(r.body, `"node-a"`) {
		t.Errorf("list while not current, cloud away: got %d %q, want the held lease", r.code, r.body)
	}
}
