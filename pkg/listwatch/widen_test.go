package listwatch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// podCallerKey marks a test request as a pod's, authorized for itself.
type podCallerKey struct{}

// widenedRig syncs node-a's own Node in part and holds every Node whole
// for pods; a request with the X-Test-Pod header is a pod's.
type widenedRig struct {
	srv             *httptest.Server
	cloud           *fakeCloud
	online, current atomic.Bool
	whole           *versioncache.Cache
}

func newWidenedRig(t *testing.T, held bool) *widenedRig {
	r := &widenedRig{cloud: newFakeCloud(t)}
	r.online.Store(true)
	r.current.Store(true)
	own := MustCache(t, nodesGVR, 5, nodeJSON("node-a", 5, false))
	r.whole = versioncache.New(nodesGVR, 0)
	t.Cleanup(r.whole.Close)
	if held {
		r.whole.SetInfo(infos[nodesGVR])
		r.whole.Replace([]*versioncache.Object{MustObject(t, nodeJSON("node-a", 5, false)),
			MustObject(t, nodeJSON("node-b", 6, false)), MustObject(t, nodeJSON("node-c", 7, false))}, 9)
	}
	h, err := New(Config{Caches: []*versioncache.Cache{own}, Widened: []*versioncache.Cache{r.whole},
		Cloud: r.cloud.config(), CloudConnected: r.online.Load,
		Scopes:     map[schema.GroupVersionResource]Scope{nodesGVR: {FieldSelector: "metadata.name=node-a"}},
		Current:    func(schema.GroupVersionResource) bool { return r.current.Load() },
		NodeCaller: func(ctx context.Context) bool { return ctx.Value(podCallerKey{}) == nil }})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(asNode(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("X-Test-Pod") != "" {
			req = req.WithContext(context.WithValue(req.Context(), podCallerKey{}, true))
		}
		h.ServeHTTP(w, req)
	})))
	t.Cleanup(r.srv.Close)
	return r
}

// A pod's cluster-wide list of Nodes is answered from the whole copy
// while it is held and current, online and offline; the node keeps its
// own Node only, and nobody is answered the partial set as a list.
func TestWidenedForPods(t *testing.T) {
	const all = "/api/v1/nodes"
	for _, tc := range []struct {
		name                 string
		pod, held, current   bool
		accept               string
		wantOnline, wantOffl string // "cloud", "503", "limited", or the nodes listed
	}{
		{"pod, held", true, true, true, "", "node-a,node-b,node-c", "node-a,node-b,node-c"},
		{"pod, held, no owner syncs", true, true, false, "", "cloud", "node-a,node-b,node-c"},
		{"pod, not held", true, false, true, "", "cloud", "503"},
		{"node, held for pods", false, true, true, "", "cloud", "503"},
		{"node, not held", false, false, true, "", "cloud", "503"},
		{"node, a Table", false, true, true, kubectlAccept, "cloud", "limited"},
		{"pod, not held, a Table", true, false, true, kubectlAccept, "cloud", "limited"},
	} {
		for _, online := range []bool{true, false} {
			want := map[bool]string{true: tc.wantOnline, false: tc.wantOffl}[online]
			t.Run(tc.name+map[bool]string{true: " online", false: " offline"}[online], func(t *testing.T) {
				r := newWidenedRig(t, tc.held)
				r.online.Store(online)
				r.current.Store(tc.current)
				h := http.Header{}
				if tc.pod {
					h.Set("X-Test-Pod", "1")
				}
				if tc.accept != "" {
					h.Set("Accept", tc.accept)
				}
				if got := r.read(t, all, h); got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
			})
		}
	}
}

// The node's own Node stays local for the node, offline too.
func TestWidenedKeepsTheNodesOwnView(t *testing.T) {
	r := newWidenedRig(t, true)
	r.online.Store(false)
	for _, path := range []string{"/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a", "/api/v1/nodes/node-a"} {
		if got := r.read(t, path, nil); got != "node-a" {
			t.Errorf("%s: got %s, want node-a only", path, got)
		}
	}
	if got := r.read(t, "/api/v1/nodes/node-b", nil); got != "503" {
		t.Errorf("the node's get of another Node offline: got %s, want 503", got)
	}
	if got := r.read(t, "/api/v1/nodes/node-b", http.Header{"X-Test-Pod": {"1"}}); got != "node-b" {
		t.Errorf("a pod's get of another Node offline: got %s, want it from the whole copy", got)
	}
}

// read names how the request was answered.
func (r *widenedRig) read(t *testing.T, path string, h http.Header) string {
	before := len(r.cloud.requests())
	rep := MustDo(t, http.MethodGet, r.srv.URL+path, h, "")
	switch {
	case len(r.cloud.requests()) > before:
		return "cloud"
	case rep.code == http.StatusServiceUnavailable:
		return "503"
	case rep.code == http.StatusOK && rep.header.Get("Warning") != "":
		return "limited"
	case rep.code != http.StatusOK:
		return rep.body
	}
	var names []string
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		if strings.Contains(rep.body, `"name":"`+n+`"`) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}
