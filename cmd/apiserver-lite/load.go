package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// loadCaches builds one cache per resource and fills it from the store, so
// the last known state is served even if the cloud is unreachable.
func loadCaches(ctx context.Context, store *metastore.Store, res []cloudsync.Resource, size int, log *slog.Logger) ([]*versioncache.Cache, error) {
	caches := make([]*versioncache.Cache, 0, len(res))
	for _, r := range res {
		c := versioncache.New(r.GVR, size)
		if err := loadCache(ctx, store, r, c, log); err != nil {
			return nil, err // names the resource
		}
		log.Info("loaded resource", "resource", r.Key(), "ready", c.Ready(), "rv", c.RV())
		caches = append(caches, c)
	}
	return caches, nil
}

func loadCache(ctx context.Context, store *metastore.Store, r cloudsync.Resource, c *versioncache.Cache, log *slog.Logger) error {
	raw, err := store.GetMeta(ctx, r.InfoKey())
	switch {
	case errors.Is(err, metastore.ErrNotFound):
		return nil // never synced: the first cloud list fills it
	case err != nil:
		return err
	}
	var info versioncache.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("decode info of %s: %w", r.Key(), err)
	}
	c.SetInfo(info)
	snap, err := store.LoadSnapshot(ctx, r.Key())
	if err != nil {
		return err
	}
	cloudsync.RestoreCache(c, snap, log.With("resource", r.Key()))
	return nil
}

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
	}
	return nil
}
