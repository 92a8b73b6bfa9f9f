package holding

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Cluster scope holds what is configured; node scope holds its own set,
// whatever is configured, without waiting for the cloud.
func TestScoped(t *testing.T) {
	configured := []cloudsync.Resource{{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}}
	cloud := &rest.Config{Host: "https://cloud.invalid"}
	for _, tc := range []struct {
		want, wantScope string
		wantRes         []cloudsync.Resource
	}{
		{want: ScopeCluster, wantScope: ScopeCluster, wantRes: configured},
		{want: ScopeNode, wantScope: ScopeNode, wantRes: NodeResources("n1")},
	} {
		t.Run(tc.want, func(t *testing.T) {
			scope, res, _, err := Scoped(context.Background(), tc.want, "n1", configured, cloud, nil, slog.New(slog.DiscardHandler))
			if err != nil || scope != tc.wantScope || len(res) != len(tc.wantRes) || res[0].GVR != tc.wantRes[0].GVR {
				t.Fatalf("got %q, %v, %v; want %q with %v", scope, res, err, tc.wantScope, tc.wantRes)
			}
		})
	}
}

// The node's own sync loops are those of what it lists and watches on its
// credentials; only what the pool's leader serves whole reads from it.
func TestSyncers(t *testing.T) {
	raw, err := cloudsync.NewRawClient(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	endpointSlices := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	res := []cloudsync.Resource{
		{GVR: PodsGVR, FieldSelector: "spec.nodeName=n1"},
		{GVR: services},
		{GVR: ConfigMapsGVR, OnDemand: true},
		{GVR: endpointSlices, ForPods: true},
	}
	caches := make([]*versioncache.Cache, len(res))
	for i, r := range res {
		caches[i] = versioncache.New(r.GVR, 1)
	}
	for _, tc := range []struct {
		name       string
		pool       bool
		wantLeader []string
	}{
		{"no pool", false, nil},
		{"a pool member", true, []string{"services"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			var leader func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext
			if tc.pool {
				leader = func(r cloudsync.Resource, cloud cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
					asked = append(asked, r.GVR.Resource)
					return cloud
				}
			}
			got := Syncers(cloudsync.Config{Link: linktest.Up(t)}, raw, nil, res, caches, leader)
			if len(got) != 2 {
				t.Errorf("got %d syncers, want 2: the node's pods and services, not what demand and forpods sync", len(got))
			}
			if !slices.Equal(asked, tc.wantLeader) {
				t.Errorf("read from the leader: got %v, want %v", asked, tc.wantLeader)
			}
		})
	}
}
