//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// informerSyncTimeout bounds how long the informers of every synced
// resource may take to sync through apiserver-lite.
const informerSyncTimeout = time.Minute

// syncedResource is one entry of apiserver-lite's default sync set, with
// the scope it syncs from the cloud.
type syncedResource struct {
	gvr           schema.GroupVersionResource
	namespace     string // "" is every namespace
	fieldSelector string
}

// defaultSyncSet mirrors the daemon's default resources for node.
func defaultSyncSet(node string) []syncedResource {
	core := func(r string) syncedResource {
		return syncedResource{gvr: schema.GroupVersionResource{Version: "v1", Resource: r}}
	}
	pods, nodes := core("pods"), core("nodes")
	pods.fieldSelector = "spec.nodeName=" + node
	nodes.fieldSelector = "metadata.name=" + node
	gvr := func(g, r string) syncedResource {
		return syncedResource{gvr: schema.GroupVersionResource{Group: g, Version: "v1", Resource: r}}
	}
	leases := gvr("coordination.k8s.io", "leases")
	leases.namespace = "kube-node-lease"
	return []syncedResource{
		pods, nodes, core("namespaces"), core("services"), core("configmaps"), core("secrets"),
		core("persistentvolumeclaims"), core("persistentvolumes"),
		gvr("discovery.k8s.io", "endpointslices"), gvr("networking.k8s.io", "servicecidrs"), gvr("storage.k8s.io", "csidrivers"),
		gvr("storage.k8s.io", "csinodes"), gvr("node.k8s.io", "runtimeclasses"), leases,
	}
}

// collectionPath is the URL path of r's collection.
func (r syncedResource) collectionPath() string {
	p := "/apis/" + r.gvr.Group + "/" + r.gvr.Version
	if r.gvr.Group == "" {
		p = "/api/" + r.gvr.Version
	}
	if r.namespace != "" {
		p += "/namespaces/" + r.namespace
	}
	return p + "/" + r.gvr.Resource
}

// TestEdgeFidelity seeds the cloud with objects of every synced kind,
// starts apiserver-lite, and checks that client-go informers (with the
// WatchListClient feature on and off) and kubectl see exactly the cloud's
// objects and resourceVersions through the edge.
func TestEdgeFidelity(t *testing.T) {
	c := framework.New(t, framework.Options{Namespaces: []string{fidelityNS}})
	fx := seedCloud(t, c)
	c.StartEdge()
	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("informers/WatchListClient=%t", watchList), func(t *testing.T) {
			testInformerFidelity(t, c, fx, watchList)
		})
	}
	t.Run("kubectl", func(t *testing.T) { testKubectlThroughEdge(t, c) })
}

// testInformerFidelity runs one dynamic informer per synced resource
// against the edge and compares their stores with cloud LISTs.
func testInformerFidelity(t *testing.T, c *framework.Cluster, fx fixture, watchList bool) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
	cloud, err := dynamic.NewForConfig(c.AdminConfig)
	if err != nil {
		t.Fatalf("cloud dynamic client: %v", err)
	}
	log := &requestLog{}
	cfg := c.EdgeConfig()
	cfg.WrapTransport = log.wrap
	edge, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("edge dynamic client: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resources := defaultSyncSet(c.NodeName)
	stores, synced := startInformers(ctx, edge, resources)
	syncCtx, syncCancel := context.WithTimeout(ctx, informerSyncTimeout)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), synced...) {
		t.Fatalf("informers did not sync through the edge within %s; requests:\n%s", informerSyncTimeout, log)
	}
	for _, r := range resources {
		checkInformerProtocol(t, log, r, watchList)
	}
	var diff string
	_, err = eventually(ctx, edgeSyncTimeout, func() (string, error) {
		diff = compareWithCloud(ctx, cloud, resources, stores)
		if diff != "" {
			return diff, fmt.Errorf("informer stores differ from the cloud")
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("%v:\n%s", err, diff)
	}
	fx.checkScope(t, resources, stores)
	checkInformerFollows(t, c, stores[slices.IndexFunc(resources, isConfigMaps)])
}

func isConfigMaps(r syncedResource) bool { return r.gvr.Resource == "configmaps" }

// startInformers runs one informer per resource until ctx ends.
func startInformers(ctx context.Context, client dynamic.Interface, resources []syncedResource) ([]cache.Store, []cache.InformerSynced) {
	var stores []cache.Store
	var synced []cache.InformerSynced
	for _, r := range resources {
		inf := dynamicinformer.NewFilteredDynamicInformer(client, r.gvr, r.namespace, 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.FieldSelector = r.fieldSelector }).Informer()
		go inf.RunWithContext(ctx)
		stores = append(stores, inf.GetStore())
		synced = append(synced, inf.HasSynced)
	}
	return stores, synced
}

// checkInformerProtocol checks how r's informer synced: with WatchList on
// through one sendInitialEvents watch answered 200 and no LIST at all; with
// it off through a LIST and never asking for sendInitialEvents.
func checkInformerProtocol(t *testing.T, log *requestLog, r syncedResource, watchList bool) {
	t.Helper()
	reqs := log.forPath(r.collectionPath())
	watchListAt := slices.IndexFunc(reqs, func(e loggedRequest) bool { return e.query.Get("sendInitialEvents") == "true" })
	listAt := slices.IndexFunc(reqs, func(e loggedRequest) bool { return e.query.Get("watch") == "" })
	switch {
	case watchList && watchListAt < 0:
		t.Errorf("%s: WatchListClient on but no sendInitialEvents request; requests:\n%s", r.gvr, log)
	case watchList && reqs[watchListAt].code != http.StatusOK:
		t.Errorf("%s: sendInitialEvents answered %d, want %d", r.gvr, reqs[watchListAt].code, http.StatusOK)
	case watchList && listAt >= 0:
		t.Errorf("%s: WatchListClient on but the informer sent a LIST; requests:\n%s", r.gvr, log)
	case !watchList && (listAt < 0 || reqs[listAt].code != http.StatusOK):
		t.Errorf("%s: no successful LIST through the edge; requests:\n%s", r.gvr, log)
	case !watchList && watchListAt >= 0:
		t.Errorf("%s: WatchListClient off but sendInitialEvents was sent: %s", r.gvr, reqs[watchListAt].query.Encode())
	}
}

// compareWithCloud lists every resource from the cloud with the edge's
// scope and returns a description of where the informer stores differ, or
// "" when they hold the same keys at the same resourceVersions.
func compareWithCloud(ctx context.Context, cloud dynamic.Interface, resources []syncedResource, stores []cache.Store) string {
	var b strings.Builder
	for i, r := range resources {
		want, err := cloudRVs(ctx, cloud, r)
		if err != nil {
			fmt.Fprintf(&b, "%s: cloud list: %v\n", r.gvr, err)
			continue
		}
		if got := storeRVs(stores[i]); !maps.Equal(got, want) {
			fmt.Fprintf(&b, "%s: informer has %v, cloud LIST has %v\n", r.gvr, got, want)
		}
	}
	return b.String()
}

// cloudRVs lists r from the cloud with the edge's namespace and field
// selector and returns resourceVersions by informer key.
func cloudRVs(ctx context.Context, cloud dynamic.Interface, r syncedResource) (map[string]string, error) {
	list, err := cloud.Resource(r.gvr).Namespace(r.namespace).List(ctx, metav1.ListOptions{FieldSelector: r.fieldSelector})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range list.Items {
		key, err := cache.MetaNamespaceKeyFunc(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out[key] = list.Items[i].GetResourceVersion()
	}
	return out, nil
}

// storeRVs returns the resourceVersions in an informer store by key.
func storeRVs(s cache.Store) map[string]string {
	out := map[string]string{}
	for _, obj := range s.List() {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			continue
		}
		if m, ok := obj.(metav1.Object); ok {
			out[key] = m.GetResourceVersion()
		}
	}
	return out
}

// loggedRequest is one request a client made to the edge and its answer.
type loggedRequest struct {
	method string
	path   string
	query  url.Values
	code   int
}

// requestLog records every request of a client built with its wrap as
// the rest.Config's WrapTransport. Safe for concurrent use.
type requestLog struct {
	mu sync.Mutex
	// entries are in the order the answers arrived. Guarded by mu.
	entries []loggedRequest
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return loggingRoundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		e := loggedRequest{method: req.Method, path: req.URL.Path, query: req.URL.Query()}
		if err == nil {
			e.code = resp.StatusCode
		}
		l.mu.Lock()
		l.entries = append(l.entries, e)
		l.mu.Unlock()
		return resp, err
	})
}

// forPath returns the requests made to path, in order.
func (l *requestLog) forPath(path string) []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []loggedRequest
	for _, e := range l.entries {
		if e.path == path {
			out = append(out, e)
		}
	}
	return out
}

func (l *requestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.entries {
		fmt.Fprintf(&b, "  %s %s?%s -> %d\n", e.method, e.path, e.query.Encode(), e.code)
	}
	return b.String()
}

type loggingRoundTripper func(*http.Request) (*http.Response, error)

func (f loggingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
