package forpods

import (
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	scope "github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// NodeConfig is what the node holds for its pods' own identities, from
// the pod-identity-* settings, and what it holds them on.
type NodeConfig struct {
	// Resources are pod-identity-resources (group/version/resource).
	Resources []string
	// MaxResources bounds the resources held at once, cluster-wide, and
	// per namespace.
	MaxResources int
	// Owners are pod-identity-owners (namespace/name or namespace/*).
	Owners []string
	// Caps are the parsed caps (ParseCaps); NamespaceObjects 0 holds
	// nothing in namespaces.
	Caps Caps
	// CacheSize is a namespaced holding's watch cache size.
	CacheSize int
	// Res are the configured resources and Caches theirs, index for index.
	Res    []cloudsync.Resource
	Caches []*versioncache.Cache
	// Sync is what a holding syncs through; its Pool and Wrap are applied
	// to the cluster-wide holdings only.
	Sync  SyncDeps
	Store Store
	// Restored are the namespaced holdings an earlier run stored.
	Restored []RestoredHolding
	// API serves the local reads of one namespaced holding's cache.
	API func(cache *versioncache.Cache, ns string) (http.Handler, error)
}

// NewForNode builds the cluster-wide holdings for pods of c.Res's ForPods
// resources; nil when there are none or the node's pods are not synced.
func NewForNode(c NodeConfig) (*Holdings, error) {
	held, pods := HeldOf(c.Res, c.Caches)
	if len(held) == 0 {
		return nil, nil
	}
	mint, err := NodeMinter(c.Sync.Cloud)
	if err != nil {
		return nil, err
	}
	owners, err := ParseAllowed(c.Owners)
	if err != nil {
		return nil, err
	}
	return New(Config{Resources: held, Max: c.MaxResources, Pods: pods, Owners: owners,
		PodPresent: scope.HeldPod([]*versioncache.Cache{pods}), Mint: mint, Store: c.Store, Connected: c.Sync.Link.Connected,
		Logger: c.Sync.Logger, Sync: CloudSync(c.Sync)}), nil
}

// NewNamespacedForNode builds the namespaced holdings and bounds cluster
// (nil: none) by the total cap they share; nil when the node's pods are
// not synced or c.Caps.NamespaceObjects is 0.
func NewNamespacedForNode(c NodeConfig, cluster *Holdings) (*Namespaced, error) {
	caps := c.Caps
	caps.ClusterBytes = scope.ClusterHeldBytes(c.Res, c.Caches)
	pods := scope.NodePods(c.Res, c.Caches)
	if pods == nil || caps.NamespaceObjects == 0 {
		LimitTotal(cluster, nil, caps)
		return nil, nil
	}
	mint, err := NodeMinter(c.Sync.Cloud)
	if err != nil {
		return nil, err
	}
	sync := c.Sync
	sync.Pool, sync.Wrap, sync.Discovery = nil, nil, nil
	ns := NewNamespaced(NamespacedConfig{Secrets: HoldsSecrets(c.Resources), Covered: scope.ServedWhole(c.Res, c.Caches),
		MaxPerNamespace: c.MaxResources, Caps: caps, Restored: c.Restored, CacheSize: c.CacheSize,
		Pods: pods, PodPresent: scope.HeldPod([]*versioncache.Cache{pods}), Mint: mint, Store: c.Store,
		Connected: c.Sync.Link.Connected, Logger: c.Sync.Logger, API: c.API, Sync: NamespacedCloudSync(sync)})
	LimitTotal(cluster, ns, caps)
	return ns, nil
}
