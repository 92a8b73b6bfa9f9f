package listwatch

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scopedConfig syncs node-a's pods and Node and the leases of
// kube-node-lease, as the daemon's defaults do; online says whether the
// cloud link is up.
func scopedConfig(f *fixture, cloud *fakeCloud, online *atomic.Bool) Config {
	return Config{
		Caches:         f.caches(),
		Cloud:          cloud.config(),
		CloudConnected: online.Load,
		Scopes: map[schema.GroupVersionResource]Scope{
			podsGVR:   {FieldSelector: "spec.nodeName=node-a"},
			nodesGVR:  {FieldSelector: "metadata.name=node-a"},
			leasesGVR: {Namespace: "kube-node-lease"},
		},
	}
}

// Reads within the synced scope are local, online or not; reads outside it
// go to the cloud online. Offline, a get that may name a cloud object is
// 503, and so is a wider list or watch: only a Table (kubectl's) is
// answered locally with a Warning.
func TestReadsOutsideTheHeldSet(t *testing.T) {
	const (
		local   = "local"
		cloud   = "cloud"
		limited = "local with Warning"
		down    = "503"
		missing = "404"
	)
	tests := []struct {
		name, path           string
		wantOnline, wantOffl string
		accept               string // "" for JSON
	}{
		{"kubelet's pods", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", local, local, ""},
		{"kubelet's pods, deprecated spec.host", "/api/v1/pods?fieldSelector=spec.host%3Dnode-a", local, local, ""},
		{"kubelet's WatchList", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a&" + watchListQuery + "&timeoutSeconds=1", local, local, ""},
		{"held pod", "/api/v1/namespaces/default/pods/web-1", local, local, ""},
		{"pod not held", "/api/v1/namespaces/default/pods/elsewhere", cloud, down, ""},
		{"all pods", "/api/v1/pods", cloud, down, ""},
		{"pods of a namespace", "/api/v1/namespaces/default/pods", cloud, down, ""},
		{"watch all pods", "/api/v1/pods?watch=1&timeoutSeconds=1", cloud, down, ""},
		{"other node's pods", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b", cloud, down, ""},
		{"own node", "/api/v1/nodes/node-a", local, local, ""},
		{"own node at resourceVersion=0", "/api/v1/nodes/node-a?resourceVersion=0", local, local, ""},
		{"other node not held", "/api/v1/nodes/node-c", cloud, down, ""},
		{"all nodes", "/api/v1/nodes", cloud, down, ""},
		{"leases of the synced namespace", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", local, local, ""},
		{"missing lease of the synced namespace", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-z", missing, missing, ""},
		{"lease elsewhere", "/apis/coordination.k8s.io/v1/namespaces/default/leases/x", cloud, down, ""},
		{"whole resource: missing configmap", "/api/v1/namespaces/default/configmaps/missing", missing, missing, ""},
		{"whole resource: all configmaps", "/api/v1/configmaps", local, local, ""},
		{"all pods as a Table", "/api/v1/pods", cloud, limited, kubectlAccept},
		{"all nodes as a Table", "/api/v1/nodes", cloud, limited, kubectlAccept},
		{"watch all pods as a Table", "/api/v1/pods?watch=1&timeoutSeconds=1", cloud, limited, kubectlAccept},
	}
	for _, tt := range tests {
		for _, online := range []bool{true, false} {
			want := map[bool]string{true: tt.wantOnline, false: tt.wantOffl}[online]
			t.Run(tt.name+map[bool]string{true: " online", false: " offline"}[online], func(t *testing.T) {
				f := newFixture(t)
				fc := newFakeCloud(t)
				link := &atomic.Bool{}
				link.Store(online)
				srv := MustServer(t, scopedConfig(f, fc, link))
				var h http.Header
				if tt.accept != "" {
					h = http.Header{"Accept": {tt.accept}}
				}
				r := MustDo(t, http.MethodGet, srv.URL+tt.path, h, "")
				proxied := len(fc.requests()) > 0
				warning := r.header.Get("Warning")
				var got string
				switch {
				case proxied:
					got = cloud
				case r.code == http.StatusServiceUnavailable:
					got = down
					MustStatus(t, r) // checks Retry-After
				case r.code == http.StatusNotFound:
					got = missing
				case r.code == http.StatusOK && warning != "":
					got = limited
				case r.code == http.StatusOK:
					got = local
				default:
					got = r.body
				}
				if got != want {
					t.Fatalf("got %s (status %d, Warning %q), want %s", got, r.code, warning, want)
				}
				if got == limited && !strings.HasPrefix(warning, `299 - "`) {
					t.Errorf("got Warning %q, want a 299 warning", warning)
				}
			})
		}
	}
}

// A partially held resource (configmaps referenced by the node's pods)
// answers locally only a read naming one held object: the kubelet's get
// and single-object watch. Anything else is the cloud's, or offline 503.
func TestReadsOfAPartiallyHeldResource(t *testing.T) {
	tests := []struct {
		name, path           string
		wantOnline, wantOffl string
	}{
		{"held configmap", "/api/v1/namespaces/default/configmaps/settings", "local", "local"},
		{"kubelet's single-object watch", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dsettings&watch=1&timeoutSeconds=1", "local", "local"},
		{"configmap not held", "/api/v1/namespaces/default/configmaps/other", "cloud", "503"},
		{"list by the name of one not held", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dother", "cloud", "503"},
		{"all configmaps", "/api/v1/configmaps", "cloud", "503"},
	}
	for _, tt := range tests {
		for _, online := range []bool{true, false} {
			want := map[bool]string{true: tt.wantOnline, false: tt.wantOffl}[online]
			t.Run(tt.name+map[bool]string{true: " online", false: " offline"}[online], func(t *testing.T) {
				f := newFixture(t)
				fc := newFakeCloud(t)
				link := &atomic.Bool{}
				link.Store(online)
				cfg := scopedConfig(f, fc, link)
				cfg.Scopes[configMapsGVR] = Scope{Partial: true}
				srv := MustServer(t, cfg)
				r := MustDo(t, http.MethodGet, srv.URL+tt.path, nil, "")
				var got string
				switch {
				case len(fc.requests()) > 0:
					got = "cloud"
				case r.code == http.StatusServiceUnavailable:
					got = "503"
				case r.code == http.StatusOK && r.header.Get("Warning") != "":
					got = "limited"
				case r.code == http.StatusOK:
					got = "local"
				default:
					got = r.body
				}
				if got != want {
					t.Fatalf("got %s (status %d), want %s", got, r.code, want)
				}
			})
		}
	}
}

// The offline Warning names the synced scope, which kubectl prints.
func TestLimitedWarningNamesTheScope(t *testing.T) {
	f := newFixture(t)
	link := &atomic.Bool{}
	srv := MustServer(t, scopedConfig(f, newFakeCloud(t), link))
	r := MustDo(t, http.MethodGet, srv.URL+"/api/v1/pods", http.Header{"Accept": {kubectlAccept}}, "")
	const want = `299 - "the cloud API server is unreachable: this answer is limited to the synced pods with spec.nodeName=node-a"`
	if got := r.header.Get("Warning"); got != want {
		t.Errorf("got Warning %q, want %q", got, want)
	}
	if got := strings.Count(r.body, `"cells"`); got != 3 {
		t.Errorf("got %d rows, want the 3 held pods", got)
	}
	r = MustGet(t, srv.URL+"/api/v1/pods")
	st := MustStatus(t, r)
	if r.code != http.StatusServiceUnavailable || !strings.Contains(st.Message, "holds only the synced pods with spec.nodeName=node-a") {
		t.Errorf("got %d %q for a JSON list, want 503 naming the synced scope", r.code, st.Message)
	}
}

func TestScopesConfigErrors(t *testing.T) {
	f := newFixture(t)
	for _, scopes := range []map[schema.GroupVersionResource]Scope{
		{{Version: "v1", Resource: "secrets"}: {FieldSelector: "type=x"}},
		{podsGVR: {FieldSelector: "spec.nodeName"}},
		{podsGVR: {LabelSelector: "a in ("}},
	} {
		if _, err := New(Config{Caches: f.caches(), Scopes: scopes}); err == nil {
			t.Errorf("scopes %v: got no error", scopes)
		}
	}
}
