package forpods

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	scope "github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/api/resource"
)

// HeldOf picks, from the configured resources and their caches (index
// for index), what is held for pods cluster-wide and the node's pods'
// cache. Nothing is held (nil held) when there are no such resources or
// the node's pods are not synced (see the holding package's PodHeldResources).
func HeldOf(res []cloudsync.Resource, caches []*versioncache.Cache) ([]Held, *versioncache.Cache) {
	var held []Held
	var pods *versioncache.Cache
	for i, r := range res {
		switch {
		case r.ForPods:
			held = append(held, Held{Resource: r, Cache: caches[i], Widens: scope.Widens(r, res)})
		case r.GVR == scope.PodsGVR:
			pods = caches[i]
		}
	}
	if pods == nil {
		return nil, nil
	}
	return held, pods
}

// ParseCaps reads the caps on what is held for pods from their settings:
// objects and bytes (quantities such as 64Mi) in one namespace, and bytes
// of every holding for pods. ClusterBytes is left to the caller.
func ParseCaps(namespaceObjects int, namespaceBytes, totalBytes string) (Caps, error) {
	if namespaceObjects < 0 {
		return Caps{}, fmt.Errorf("pod-identity-namespace-max-objects must not be negative, got %d", namespaceObjects)
	}
	ns, err := byteQuantity("pod-identity-namespace-max-bytes", namespaceBytes)
	if err != nil {
		return Caps{}, err
	}
	total, err := byteQuantity("pod-identity-max-bytes", totalBytes)
	if err != nil {
		return Caps{}, err
	}
	return Caps{NamespaceObjects: namespaceObjects, NamespaceBytes: ns, TotalBytes: total}, nil
}

// byteQuantity parses setting's value, a quantity of bytes not below 0.
func byteQuantity(setting, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("%s must be a quantity of bytes such as 64Mi, got %q", setting, v)
	}
	return q.Value(), nil
}

// HoldsSecrets reports whether namespaced holdings may hold secrets: only
// when the pod-identity resources (group/version/resource) list them.
func HoldsSecrets(resources []string) bool {
	return slices.ContainsFunc(resources, func(s string) bool {
		gvr, err := scope.ParseGVR(s)
		return err == nil && gvr == secretsGVR
	})
}

// LimitTotal bounds the cluster-wide holdings (nil: none) by the total
// cap: through ns when there are namespaced holdings (they share the
// cap), else by what the cluster-wide holdings hold alone.
func LimitTotal(cluster *Holdings, ns *Namespaced, caps Caps) {
	switch {
	case cluster == nil:
	case ns != nil:
		cluster.LimitTotalBytes(ns.AtTotalBytes)
	default:
		cluster.LimitTotalBytes(func() bool { return caps.ClusterBytes() >= caps.TotalBytes })
	}
}

// RestoreNamespaced finds the namespaced holdings stored by an earlier
// run, and their resources, to be loaded beside the configured ones.
func RestoreNamespaced(ctx context.Context, store MetaLister, log *slog.Logger) ([]RestoredHolding, []cloudsync.Resource, error) {
	stored, err := StoredNamespaced(ctx, store)
	if err != nil {
		return nil, nil, err
	}
	res := make([]cloudsync.Resource, len(stored))
	for i, s := range stored {
		res[i] = s.Resource
	}
	if len(stored) > 0 {
		log.Info("resuming namespaced holdings", "count", len(stored))
	}
	return stored, res, nil
}

// SplitRestored splits caches, loaded for n configured resources followed
// by restored's, into the configured ones' and restored, whose caches it
// sets.
func SplitRestored(caches []*versioncache.Cache, n int, restored []RestoredHolding) ([]*versioncache.Cache, []RestoredHolding) {
	for i := range restored {
		restored[i].Cache = caches[n+i]
	}
	return caches[:n:n], restored
}
