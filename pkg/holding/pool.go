package holding

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
