package listwatch

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// aggregatedAccept is what client-go's discovery sends.
const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

func MustDecode(t testing.TB, r reply, into any) {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("got status %d body %s, want 200", r.code, r.body)
	}
	if got := r.header.Get("Content-Type"); got != response.MediaTypeJSON {
		t.Errorf("got Content-Type %q, want %q", got, response.MediaTypeJSON)
	}
	if err := json.Unmarshal([]byte(r.body), into); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

func TestLocalDiscovery(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches(), CloudConnected: func() bool { return false }})
	get := func(path string) reply {
		return MustDo(t, http.MethodGet, srv.URL+path, http.Header{"Accept": {response.MediaTypeJSON}}, "")
	}
	var versions metav1.APIVersions
	MustDecode(t, get("/api"), &versions)
	if versions.Kind != "APIVersions" || !reflect.DeepEqual(versions.Versions, []string{"v1"}) {
		t.Errorf("got /api %+v, want APIVersions [v1]", versions)
	}
	var core metav1.APIResourceList
	MustDecode(t, get("/api/v1"), &core)
	want := []metav1.APIResource{infos[podsGVR], infos[configMapsGVR], infos[namespacesGVR], infos[nodesGVR]}
	if core.Kind != "APIResourceList" || core.GroupVersion != "v1" || !reflect.DeepEqual(core.APIResources, want) {
		t.Errorf("got /api/v1 %+v, want the core resources %+v", core, want)
	}
	var groups metav1.APIGroupList
	MustDecode(t, get("/apis"), &groups)
	lease := metav1.GroupVersionForDiscovery{GroupVersion: "coordination.k8s.io/v1", Version: "v1"}
	wantGroups := []metav1.APIGroup{{Name: "coordination.k8s.io", Versions: []metav1.GroupVersionForDiscovery{lease}, PreferredVersion: lease}}
	if groups.Kind != "APIGroupList" || !reflect.DeepEqual(groups.Groups, wantGroups) {
		t.Errorf("got /apis %+v, want %+v", groups, wantGroups)
	}
	var leases metav1.APIResourceList
	MustDecode(t, get("/apis/coordination.k8s.io/v1"), &leases)
	if !reflect.DeepEqual(leases.APIResources, []metav1.APIResource{infos[leasesGVR]}) {
		t.Errorf("got leases %+v, want %+v", leases.APIResources, infos[leasesGVR])
	}
	var group metav1.APIGroup
	MustDecode(t, get("/apis/coordination.k8s.io"), &group)
	if group.Kind != "APIGroup" || group.PreferredVersion != lease {
		t.Errorf("got group %+v, want preferred %+v", group, lease)
	}
	for _, path := range []string{"/apis/apps/v1", "/apis/apps"} {
		r := get(path)
		if MustStatus(t, r); r.code != http.StatusNotFound {
			t.Errorf("got %s status %d, want 404", path, r.code)
		}
	}
}

func TestDiscoveryVersionPriority(t *testing.T) {
	var caches []*versioncache.Cache
	for _, v := range []string{"v1beta1", "v2alpha1", "v1"} {
		gvr := schema.GroupVersionResource{Group: "example.com", Version: v, Resource: "widgets"}
		c := versioncache.New(gvr, 0)
		t.Cleanup(c.Close)
		caches = append(caches, c)
	}
	srv := MustServer(t, Config{Caches: caches})
	var groups metav1.APIGroupList
	MustDecode(t, MustGet(t, srv.URL+"/apis"), &groups)
	var got []string
	for _, v := range groups.Groups[0].Versions {
		got = append(got, v.Version)
	}
	if want := []string{"v1", "v1beta1", "v2alpha1"}; !reflect.DeepEqual(got, want) || groups.Groups[0].PreferredVersion.Version != "v1" {
		t.Errorf("got versions %v preferred %q, want %v preferred v1", got, groups.Groups[0].PreferredVersion.Version, want)
	}
	// Resources whose info is not known yet are left out.
	r := MustGet(t, srv.URL+"/apis/example.com/v1")
	if MustStatus(t, r); r.code != http.StatusNotFound {
		t.Errorf("got status %d, want 404", r.code)
	}
}

func TestDiscoveryFollowsCloudLink(t *testing.T) {
	f := newFixture(t)
	cloud := newFakeCloud(t)
	var connected atomic.Bool
	tests := []struct {
		name      string
		cloud     *rest.Config
		connected bool
		wantCloud bool
	}{
		{"connected", cloud.config(), true, true},
		{"disconnected", cloud.config(), false, false},
		{"connected but the cloud fails", downCloud(t), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			connected.Store(tt.connected)
			srv := MustServer(t, Config{Caches: f.caches(), Cloud: tt.cloud, CloudConnected: connected.Load})
			for _, path := range []string{"/api", "/api/v1", "/apis", "/apis/coordination.k8s.io/v1"} {
				r := MustGet(t, srv.URL+path)
				fromCloud := r.code == http.StatusCreated && r.body == cloudAnswer
				if fromCloud != tt.wantCloud || (!fromCloud && r.code != http.StatusOK) {
					t.Errorf("%s: got %d %q, want from cloud %v", path, r.code, r.body, tt.wantCloud)
				}
			}
		})
	}
}

// client-go's discovery client, asking for aggregated discovery, falls back
// to the plain JSON answers.
func TestClientGoDiscovery(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatalf("discovery client: %v", err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("ServerPreferredResources: %v", err)
	}
	got := map[string]bool{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			got[l.GroupVersion+"/"+r.Name] = r.Namespaced
		}
	}
	want := map[string]bool{"v1/pods": true, "v1/configmaps": true, "v1/namespaces": false,
		"v1/nodes": false, "coordination.k8s.io/v1/leases": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got resources %v, want %v", got, want)
	}
}
