package forpods

import (
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// What the node holds for its pods follows the settings: nothing
// cluster-wide without such resources or the node's pods, nothing in
// namespaces without the node's pods or with no objects allowed, and bad
// owners refused.
func TestNewForNode(t *testing.T) {
	pods := cloudsync.Resource{GVR: podsGVR, FieldSelector: "spec.nodeName=n1"}
	slices := cloudsync.Resource{GVR: schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, ForPods: true}
	for _, tc := range []struct {
		name              string
		res               []cloudsync.Resource
		nsObjects         int
		owners            []string
		wantCluster, want bool
		wantErr           string
	}{
		{name: "held for pods", res: []cloudsync.Resource{pods, slices}, nsObjects: 10, wantCluster: true, want: true},
		{name: "nothing cluster-wide", res: []cloudsync.Resource{pods}, nsObjects: 10, want: true},
		{name: "no objects in namespaces", res: []cloudsync.Resource{pods, slices}, wantCluster: true},
		{name: "node's pods not synced", res: []cloudsync.Resource{slices}, nsObjects: 10},
		{name: "bad owners", res: []cloudsync.Resource{pods, slices}, owners: []string{"no-slash"}, wantErr: "no-slash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caches := make([]*versioncache.Cache, len(tc.res))
			for i, r := range tc.res {
				caches[i] = versioncache.New(r.GVR, 1)
				defer caches[i].Close()
			}
			owners := tc.owners
			if owners == nil {
				owners = DefaultOwners
			}
			c := NodeConfig{MaxResources: 4, Owners: owners, Caps: Caps{NamespaceObjects: tc.nsObjects, NamespaceBytes: 1 << 20, TotalBytes: 1 << 20},
				CacheSize: 10, Res: tc.res, Caches: caches, Store: newMemStore(),
				Sync: SyncDeps{Cloud: &rest.Config{Host: "https://cloud.invalid"}, Logger: discard()}}
			cluster, err := NewForNode(c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || (cluster != nil) != tc.wantCluster {
				t.Fatalf("cluster-wide: got %v, %v; want held %v", cluster, err, tc.wantCluster)
			}
			ns, err := NewNamespacedForNode(c, cluster)
			if err != nil || (ns != nil) != tc.want {
				t.Fatalf("namespaced: got %v, %v; want held %v", ns, err, tc.want)
			}
		})
	}
}
