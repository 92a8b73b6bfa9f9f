package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// scopedResources returns the scope, the configured resources in cluster
// scope or node scope's set, and the background check of a scope taken
// without the cloud (nil if none).
func scopedResources(ctx context.Context, cfg config, configured []cloudsync.Resource, cloud *rest.Config, store *metastore.Store, log *slog.Logger) (string, []cloudsync.Resource, holding.Check, error) {
	ask, err := holding.SelfReview(cloud)
	if err != nil {
		return "", nil, nil, err
	}
	scope, check, err := holding.Resolve(ctx, cfg.SyncScope, cfg.NodeName, ask, store, log)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sync scope: %w", err)
	}
	log.Info("sync scope", "scope", scope, "configured", cfg.SyncScope)
	if scope == holding.ScopeCluster {
		return scope, configured, check, nil
	}
	return scope, holding.NodeResources(cfg.NodeName), check, nil
}

// newDemand returns the runner holding the OnDemand resources of res, or
// nil if there are none.
func newDemand(cl cloudClients, res []cloudsync.Resource, caches []*versioncache.Cache, store *metastore.Store, link *cloudsync.Link, log *slog.Logger) (func(context.Context) error, error) {
	byGVR := map[schema.GroupVersionResource]int{}
	for i, r := range res {
		if !r.ForPods { // a whole copy held for pods is not the node's
			byGVR[r.GVR] = i
		}
	}
	si, hasSecrets := byGVR[holding.SecretsGVR]
	ci, hasConfigMaps := byGVR[holding.ConfigMapsGVR]
	if !hasSecrets || !res[si].OnDemand {
		return nil, nil
	}
	pi, hasPods := byGVR[holding.PodsGVR]
	ni, hasNodes := byGVR[holding.NodesGVR]
	if !hasConfigMaps || !hasPods || !hasNodes {
		return nil, fmt.Errorf("on-demand secrets need pods, nodes and configmaps")
	}
	d := demand.New(demand.Config{
		Pods: caches[pi], Nodes: caches[ni],
		Secrets:    demand.Kind{Resource: res[si], Cache: caches[si]},
		ConfigMaps: demand.Kind{Resource: res[ci], Cache: caches[ci]},
		Source: func(r cloudsync.Resource) cache.ListerWatcherWithContext {
			return cl.raw.ListerWatcher(r)
		},
		Discovery: cl.disc, Store: store, Link: link, Logger: log,
	})
	return d.Run, nil
}
