package main

import (
	"context"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/tools/cache"
)

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
