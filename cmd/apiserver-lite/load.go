package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// pruneStore drops the stored state of resources no longer configured.
func pruneStore(ctx context.Context, store *metastore.Store, res []cloudsync.Resource, log *slog.Logger) error {
	keys, err := store.Resources(ctx)
	if err != nil {
		return fmt.Errorf("prune store: %w", err)
	}
	for _, k := range keys {
		if slices.ContainsFunc(res, func(r cloudsync.Resource) bool { return r.Key() == k }) {
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
