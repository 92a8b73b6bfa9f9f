package holding

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The functions below read the synced resources res and their caches,
// in res's order, for what each cache holds and for whom.

// NodePods is the cache of the node's own pods (not a whole copy held
// for pods), or nil.
func NodePods(res []cloudsync.Resource, caches []*versioncache.Cache) *versioncache.Cache {
	for i, r := range res {
		if r.GVR == PodsGVR && !r.ForPods {
			return caches[i]
		}
	}
	return nil
}

// ClusterHeldBytes sums the cluster-wide holdings for pods.
func ClusterHeldBytes(res []cloudsync.Resource, caches []*versioncache.Cache) func() int64 {
	return func() int64 {
		var n int64
		for i, r := range res {
			if r.ForPods {
				n += caches[i].Stats().Bytes
			}
		}
		return n
	}
}

// ServedWhole reports whether the main local API serves gvr in ns whole: a
// synced resource without selectors over ns or every namespace, or a
// cluster-wide holding for pods while it is held.
func ServedWhole(res []cloudsync.Resource, caches []*versioncache.Cache) func(schema.GroupVersionResource, string) bool {
	return func(gvr schema.GroupVersionResource, ns string) bool {
		for i, r := range res {
			if r.GVR != gvr || r.OnDemand || r.LabelSelector != "" || r.FieldSelector != "" || (r.Namespace != "" && r.Namespace != ns) {
				continue
			}
			if !r.ForPods || caches[i].Ready() {
				return true
			}
		}
		return false
	}
}

// SplitWidened separates the caches of whole copies held for pods beside
// a partial sync (see Widens) from the rest, which serve one GVR
// each.
func SplitWidened(res []cloudsync.Resource, caches []*versioncache.Cache) (main, widened []*versioncache.Cache) {
	for i, r := range res {
		if Widens(r, res) {
			widened = append(widened, caches[i])
		} else {
			main = append(main, caches[i])
		}
	}
	return main, widened
}

// LocalScopes is what the local API holds of each synced resource, so it
// sends reads of anything wider to the cloud: its namespace and selectors,
// only some objects by name (OnDemand), or only while pods read it on
// their own identities (ForPods). A whole copy held for pods beside a
// partial sync (Widens) is the local API's Widened, not a scope.
func LocalScopes(res []cloudsync.Resource) map[schema.GroupVersionResource]scope.Held {
	out := make(map[schema.GroupVersionResource]scope.Held, len(res))
	for _, r := range res {
		if Widens(r, res) {
			continue
		}
		out[r.GVR] = scope.Held{Namespace: r.Namespace, LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector,
			Partial: r.OnDemand, OnRequest: r.ForPods}
	}
	return out
}
