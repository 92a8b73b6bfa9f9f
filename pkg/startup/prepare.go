package startup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Prepare readies the store for a start and loads the caches: it drops
// the stored state of resources no longer configured, records the node
// name (snapshots carry it), and loads one cache of size events per
// resource of res, in res's order.
func Prepare(ctx context.Context, store *metastore.Store, res []Resource, node string, size int, log *slog.Logger) ([]*versioncache.Cache, error) {
	if err := prune(ctx, store, res, log); err != nil {
		return nil, err
	}
	if err := recordNodeName(ctx, store, node); err != nil {
		return nil, fmt.Errorf("record node name: %w", err)
	}
	return LoadCaches(ctx, store, res, size, log)
}

// prune drops the stored state of resources no longer configured.
func prune(ctx context.Context, store *metastore.Store, res []Resource, log *slog.Logger) error {
	keys, err := store.Resources(ctx)
	if err != nil {
		return fmt.Errorf("prune store: %w", err)
	}
	for _, k := range keys {
		if slices.ContainsFunc(res, func(r Resource) bool { return r.Key == k }) {
			continue
		}
		log.Info("dropping state of unconfigured resource", "resource", k)
		if err := store.Drop(ctx, k); err != nil {
			return fmt.Errorf("prune store: %w", err)
		}
		// A scope change may drop every secret: no copy may stay in the WAL.
		if err := store.Scrub(ctx); err != nil {
			log.Warn("scrubbing dropped state from the WAL failed", "err", err)
		}
	}
	return nil
}

// recordNodeName stores the node name unless it is stored already: a
// restart then reads it instead of waiting for a durable write.
func recordNodeName(ctx context.Context, store *metastore.Store, node string) error {
	stored, err := store.GetMeta(ctx, metastore.NodeNameKey)
	if err == nil && string(stored) == node {
		return nil
	}
	if err != nil && !errors.Is(err, metastore.ErrNotFound) {
		return err
	}
	return store.PutMeta(ctx, metastore.NodeNameKey, []byte(node))
}
