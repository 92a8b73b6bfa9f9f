package listwatch

import (
	"context"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Metadata clients' conversions: PartialObjectMetadata of a get,
// PartialObjectMetadataList of a list, kube's 406 for the wrong shape.
func TestPartialObjectMetadata(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	const (
		pom     = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
		pomList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	)
	r := MustDo(t, http.MethodGet, srv.URL+"/api/v1/namespaces/default/pods/web-1", http.Header{"Accept": {pom}}, "")
	var obj metav1.PartialObjectMetadata
	MustDecode(t, r, &obj)
	if obj.Kind != "PartialObjectMetadata" || obj.APIVersion != "meta.k8s.io/v1" || obj.Name != "web-1" || obj.ResourceVersion != "11" {
		t.Errorf("get: got %+v, want web-1's PartialObjectMetadata", obj)
	}
	r = MustDo(t, http.MethodGet, srv.URL+"/api/v1/pods", http.Header{"Accept": {pomList}}, "")
	var list metav1.PartialObjectMetadataList
	MustDecode(t, r, &list)
	if list.Kind != "PartialObjectMetadataList" || len(list.Items) != 3 || list.ResourceVersion != "20" {
		t.Errorf("list: got %s with %d items at %q, want a PartialObjectMetadataList of 3 at 20", list.Kind, len(list.Items), list.ResourceVersion)
	}
	for _, tc := range []struct{ path, accept, want string }{
		{"/api/v1/namespaces/default/pods/web-1", pomList, "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)"},
		{"/api/v1/pods", pom, "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"},
		{"/apis/coordination.k8s.io/v1/leases", pom, "you requested PartialObjectMetadata, but the requested object is a list (*coordination.LeaseList)"},
	} {
		r := MustDo(t, http.MethodGet, srv.URL+tc.path, http.Header{"Accept": {tc.accept}}, "")
		if st := MustStatus(t, r); r.code != http.StatusNotAcceptable || st.Message != tc.want {
			t.Errorf("%s %s: got %d %q, want 406 %q", tc.path, tc.accept, r.code, st.Message, tc.want)
		}
	}
}

// client-go's metadata informer (protobuf PartialObjectMetadata, with and
// without WatchListClient) syncs through the local API and follows
// changes.
func TestClientGoMetadataInformer(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(map[bool]string{false: "list and watch", true: "WatchList"}[watchList], func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			f := newFixture(t)
			srv := MustServer(t, Config{Caches: f.caches()})
			mc, err := metadata.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatalf("metadata client: %v", err)
			}
			inf := metadatainformer.NewFilteredMetadataInformer(mc, podsGVR, "", 0, cache.Indexers{}, nil).Informer()
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			go inf.RunWithContext(ctx)
			syncCtx, syncCancel := context.WithTimeout(ctx, waitTimeout)
			defer syncCancel()
			if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
				t.Fatalf("metadata informer did not sync within %s", waitTimeout)
			}
			for _, o := range inf.GetStore().List() {
				if m, err := meta.Accessor(o); err != nil || m.GetName() == "" {
					t.Errorf("got store object %T %v", o, err)
				}
			}
			if got, want := inf.GetStore().ListKeys(), []string{"default/web-1", "default/web-2", "kube-system/dns-1"}; !sameKeys(got, want) {
				t.Errorf("got keys %v, want %v", got, want)
			}
			MustApply(t, f.pods, 21, watch.Added, podJSON("default", "new", 21, "node-a", "Pending", nil))
			waitForKeys(t, inf, []string{"default/new", "default/web-1", "default/web-2", "kube-system/dns-1"})
		})
	}
}

// A custom resource, JSON only otherwise, gets its PartialObjectMetadata
// watch in protobuf frames when asked, as kube's metadata clients ask.
func TestPartialObjectMetadataCustomResourceProtobufWatch(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	c := MustCache(t, gvr, 5, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","resourceVersion":"5"}}`)
	c.SetInfo(metav1.APIResource{Name: "widgets", Namespaced: true, Kind: "Widget", Verbs: []string{"get", "list", "watch"}})
	srv := MustServer(t, Config{Caches: []*versioncache.Cache{c}})
	mc, err := metadata.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatalf("metadata client: %v", err)
	}
	w, err := mc.Resource(gvr).Namespace("default").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		m, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Added || !ok || m.Name != "w" {
			t.Errorf("got %s %#v, want ADDED PartialObjectMetadata w", ev.Type, ev.Object)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("no event within %s", waitTimeout)
	}
}
