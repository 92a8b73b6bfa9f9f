package listwatch

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/disk"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// v2Accept asks for aggregated discovery v2 only.
const v2Accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func MustAggregated(t testing.TB, r reply) apidiscoveryv2.APIGroupDiscoveryList {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("got status %d body %s, want 200", r.code, r.body)
	}
	if got := r.header.Get("Content-Type"); got != v2Accept {
		t.Errorf("got Content-Type %q, want %q", got, v2Accept)
	}
	var l apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal([]byte(r.body), &l); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	if l.Kind != "APIGroupDiscoveryList" || l.APIVersion != "apidiscovery.k8s.io/v2" {
		t.Errorf("got kind %q apiVersion %q, want APIGroupDiscoveryList apidiscovery.k8s.io/v2", l.Kind, l.APIVersion)
	}
	return l
}

func TestAggregatedDiscoveryShape(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	get := func(path, accept string) reply {
		return MustDo(t, http.MethodGet, srv.URL+path, http.Header{"Accept": {accept}}, "")
	}
	core := MustAggregated(t, get("/api", aggregatedAccept))
	pods := apidiscoveryv2.APIResourceDiscovery{Resource: "pods", SingularResource: "pod",
		Scope: apidiscoveryv2.ScopeNamespace, ResponseKind: &metav1.GroupVersionKind{Kind: "Pod"},
		Verbs: infos[podsGVR].Verbs, ShortNames: []string{"po"}}
	nodes := apidiscoveryv2.APIResourceDiscovery{Resource: "nodes", SingularResource: "node",
		Scope: apidiscoveryv2.ScopeCluster, ResponseKind: &metav1.GroupVersionKind{Kind: "Node"},
		Verbs: infos[nodesGVR].Verbs, ShortNames: []string{"no"}}
	if len(core.Items) != 1 || core.Items[0].Name != "" || len(core.Items[0].Versions) != 1 {
		t.Fatalf("got /api items %+v, want the core group with one version", core.Items)
	}
	v1 := core.Items[0].Versions[0]
	var names []string
	for _, r := range v1.Resources {
		names = append(names, r.Resource)
	}
	if want := []string{"configmaps", "namespaces", "nodes", "pods"}; !reflect.DeepEqual(names, want) {
		t.Errorf("got core resources %v, want %v", names, want)
	}
	if v1.Version != "v1" || v1.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("got version %q freshness %q, want v1 Current", v1.Version, v1.Freshness)
	}
	if !reflect.DeepEqual(v1.Resources[3], pods) || !reflect.DeepEqual(v1.Resources[2], nodes) {
		t.Errorf("got pods %+v nodes %+v, want %+v and %+v", v1.Resources[3], v1.Resources[2], pods, nodes)
	}
	groups := MustAggregated(t, get("/apis", v2Accept+";profile=nopeer"))
	lease := apidiscoveryv2.APIResourceDiscovery{Resource: "leases", SingularResource: "lease",
		Scope:        apidiscoveryv2.ScopeNamespace,
		ResponseKind: &metav1.GroupVersionKind{Kind: "Lease"},
		Verbs:        infos[leasesGVR].Verbs}
	want := []apidiscoveryv2.APIGroupDiscovery{{ObjectMeta: metav1.ObjectMeta{Name: "coordination.k8s.io"},
		Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1", Freshness: "Current",
			Resources: []apidiscoveryv2.APIResourceDiscovery{lease}}}}}
	if !reflect.DeepEqual(groups.Items, want) {
		t.Errorf("got /apis items %+v, want %+v", groups.Items, want)
	}
}

// Clauses kube 1.36 does not serve as aggregated discovery (v2beta1, other
// kinds) fall through to the legacy documents.
func TestAggregatedDiscoveryNegotiation(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	tests := []struct {
		path, accept, wantType string
	}{
		{"/api", aggregatedAccept, v2Accept},
		{"/apis", v2Accept, v2Accept},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", response.MediaTypeJSON},
		{"/apis", "application/json;q=0.5," + v2Accept, v2Accept},
		{"/apis", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", response.MediaTypeJSON},
		{"/apis", "", response.MediaTypeJSON},
		{"/api/v1", v2Accept + ",application/json", response.MediaTypeJSON},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			r := MustDo(t, http.MethodGet, srv.URL+tt.path, http.Header{"Accept": {tt.accept}}, "")
			if r.code != http.StatusOK || r.header.Get("Content-Type") != tt.wantType {
				t.Errorf("got %d %q, want 200 %q", r.code, r.header.Get("Content-Type"), tt.wantType)
			}
		})
	}
}

// The answer carries an ETag; a request that presents it gets 304.
func TestAggregatedDiscoveryETag(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	first := MustDo(t, http.MethodGet, srv.URL+"/apis", http.Header{"Accept": {v2Accept}}, "")
	etag := first.header.Get("ETag")
	if len(etag) < 3 || etag[0] != '"' || first.header.Get("Vary") != "Accept" || first.header.Get("Cache-Control") != "public" {
		t.Fatalf("got ETag %q Vary %q Cache-Control %q, want a quoted ETag, Accept, public",
			etag, first.header.Get("Vary"), first.header.Get("Cache-Control"))
	}
	again := MustDo(t, http.MethodGet, srv.URL+"/apis", http.Header{"Accept": {v2Accept}, "If-None-Match": {etag}}, "")
	if again.code != http.StatusNotModified || again.body != "" {
		t.Errorf("got %d %q, want 304 with no body", again.code, again.body)
	}
	other := MustDo(t, http.MethodGet, srv.URL+"/api", http.Header{"Accept": {v2Accept}, "If-None-Match": {etag}}, "")
	if other.code != http.StatusOK {
		t.Errorf("got /api %d with /apis's ETag, want 200", other.code)
	}
}

// recorder wraps a handler and records the request paths.
type recorder struct {
	h     http.Handler
	mu    sync.Mutex
	paths []string // guarded by mu
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.paths = append(rc.paths, r.URL.Path)
	rc.mu.Unlock()
	rc.h.ServeHTTP(w, r)
}

func (rc *recorder) seen() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.paths...)
}

// client-go's discovery clients (plain, memory-cached and disk-cached) and
// a RESTMapper work from the local answers while the cloud is down, with
// aggregated discovery: only /api and /apis are fetched.
func TestClientGoAggregatedDiscoveryCloudDown(t *testing.T) {
	f := newFixture(t)
	h, err := New(Config{Caches: f.caches(), Cloud: downCloud(t), CloudConnected: func() bool { return true }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clients := map[string]func(t *testing.T, cfg *rest.Config) discovery.CachedDiscoveryInterface{
		"memory": func(t *testing.T, cfg *rest.Config) discovery.CachedDiscoveryInterface {
			return memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg))
		},
		"disk": func(t *testing.T, cfg *rest.Config) discovery.CachedDiscoveryInterface {
			dir := t.TempDir()
			dc, err := disk.NewCachedDiscoveryClientForConfig(cfg, dir+"/discovery", dir+"/http", time.Hour)
			if err != nil {
				t.Fatalf("disk discovery client: %v", err)
			}
			return dc
		},
	}
	for name, newClient := range clients {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{h: h}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			dc := newClient(t, &rest.Config{Host: srv.URL})
			MustServerResources(t, dc)
			if got, want := rec.seen(), []string{"/api", "/apis"}; !reflect.DeepEqual(got, want) {
				t.Errorf("got requests %v, want only %v (aggregated discovery)", got, want)
			}
			mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(dc), dc, nil)
			for short, want := range map[string]schema.GroupVersionResource{"po": podsGVR, "no": nodesGVR, "cm": configMapsGVR,
				"leases": leasesGVR} {
				got, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: short})
				if err != nil || got != want {
					t.Errorf("ResourceFor(%q) = %v, %v; want %v", short, got, err, want)
				}
			}
			gvk, err := mapper.KindFor(schema.GroupVersionResource{Resource: "pods"})
			if err != nil || gvk.Kind != "Pod" {
				t.Errorf("KindFor(pods) = %v, %v; want Pod", gvk, err)
			}
		})
	}
}

func MustServerResources(t *testing.T, dc discovery.DiscoveryInterface) {
	t.Helper()
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	var got []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			scope := "cluster"
			if r.Namespaced {
				scope = "namespaced"
			}
			got = append(got, l.GroupVersion+"/"+r.Name+" "+r.Kind+" "+scope)
		}
	}
	sort.Strings(got)
	want := []string{"coordination.k8s.io/v1/leases Lease namespaced", "v1/configmaps ConfigMap namespaced",
		"v1/namespaces Namespace cluster", "v1/nodes Node cluster", "v1/pods Pod namespaced"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got resources %v, want %v", got, want)
	}
}

// The sync loop records each resource's group and version in its info;
// discovery names them only where they differ from the list's, as kube
// does, so responseKind carries the kind alone.
func TestDiscoveryOmitsOwnGroupVersion(t *testing.T) {
	c := versioncache.New(leasesGVR, 0)
	info := infos[leasesGVR]
	info.Group, info.Version = leasesGVR.Group, leasesGVR.Version
	c.SetInfo(info)
	t.Cleanup(c.Close)
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{c}})
	var list metav1.APIResourceList
	MustDecode(t, MustDo(t, http.MethodGet, srv.URL+"/apis/coordination.k8s.io/v1", nil, ""), &list)
	if got := list.APIResources; len(got) != 1 || got[0].Group != "" || got[0].Version != "" {
		t.Errorf("got resources %+v, want leases without group and version", got)
	}
	agg := MustAggregated(t, MustDo(t, http.MethodGet, srv.URL+"/apis", http.Header{"Accept": {v2Accept}}, ""))
	if got := *agg.Items[0].Versions[0].Resources[0].ResponseKind; got != (metav1.GroupVersionKind{Kind: "Lease"}) {
		t.Errorf("got responseKind %+v, want kind Lease alone", got)
	}
}
