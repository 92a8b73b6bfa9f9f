package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
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
func newDemand(cl cloudClients, res []cloudsync.Resource, caches []*versioncache.Cache, store *metastore.Store, link *link.Link, log *slog.Logger) (func(context.Context) error, error) {
	own := cl.raw.WithoutRetries() // each object's watch retries with its own jitter
	cfg, ok, err := demand.Select(demand.Config{
		Source: func(r cloudsync.Resource) cache.ListerWatcherWithContext {
			return own.ListerWatcher(r)
		},
		Discovery: cl.disc, Store: store, Link: link, Logger: log,
	}, res, caches)
	if !ok || err != nil {
		return nil, err
	}
	return demand.New(cfg).Run, nil
}
