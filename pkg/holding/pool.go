package holding

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// neverPooled are the kinds a pool's leader never serves its followers,
// however it holds them: each node's own pods, and secrets and configmaps,
// which a node holds only as its pods reference them (docs/pool.md).
var neverPooled = map[schema.GroupVersionResource]bool{
	PodsGVR:                                 true,
	{Version: "v1", Resource: "secrets"}:    true,
	{Version: "v1", Resource: "configmaps"}: true,
}

// PoolWide reports what a pool's leader serves its followers: a resource
// it holds whole across the cluster, either configured without namespace
// or selector (node scope's services) or held for its pods while an owner
// syncs it (current; nil: none is). A resource held only in part (the
// node's own Node) is served only through its whole copy held for pods.
func PoolWide(res []cloudsync.Resource, current func(schema.GroupVersionResource) bool) func(schema.GroupVersionResource) bool {
	whole := map[schema.GroupVersionResource]bool{}
	forPods := map[schema.GroupVersionResource]bool{}
	for _, r := range res {
		switch {
		case neverPooled[r.GVR] || r.OnDemand:
		case r.ForPods:
			forPods[r.GVR] = true
		case r.Namespace == "" && r.LabelSelector == "" && r.FieldSelector == "":
			whole[r.GVR] = true
		}
	}
	return func(gvr schema.GroupVersionResource) bool {
		if whole[gvr] {
			return true
		}
		return forPods[gvr] && current != nil && current(gvr)
	}
}

// Upstream picks what the node syncs on its own credentials reads from:
// through leader (the pool's follower, given the cloud's ListerWatcher as
// its fallback) for what the leader serves whole (PoolWide without pods'
// holdings: services in node scope), the cloud for the rest. A nil leader
// (no pool) leaves every resource on the cloud.
func Upstream(res []cloudsync.Resource, leader func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext) func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
	whole := PoolWide(res, nil)
	return func(r cloudsync.Resource, cloud cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
		if leader == nil || r.ForPods || !whole(r.GVR) {
			return cloud
		}
		return leader(r, cloud)
	}
}
