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
		if err := loadCache(ctx, store, r, c); err != nil {
			return nil, fmt.Errorf("load %s: %w", r.Key(), err)
		}
		log.Info("loaded resource", "resource", r.Key(), "ready", c.Ready(), "rv", c.RV())
		caches = append(caches, c)
	}
	return caches, nil
}

func loadCache(ctx context.Context, store *metastore.Store, r cloudsync.Resource, c *versioncache.Cache) error {
	raw, err := store.GetMeta(ctx, r.InfoKey())
	switch {
	case errors.Is(err, metastore.ErrNotFound):
		return nil // never synced: the first cloud list fills it
	case err != nil:
		return err
	}
	var info versioncache.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("decode info: %w", err)
	}
	c.SetInfo(info)
	stored, wm, err := store.Load(ctx, r.Key())
	if err != nil || wm == 0 {
		return err
	}
	objs, err := cloudsync.LoadObjects(stored)
	if err != nil {
		return err
	}
	c.Replace(objs, wm)
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
		// A scope change may drop every secret: no copy may stay in the WAL.
		if err := store.Scrub(ctx); err != nil {
			log.Warn("scrubbing dropped state from the WAL failed", "err", err)
		}
	}
	return nil
}
