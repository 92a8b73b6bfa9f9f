package cloudsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Restore builds one cache of size events per resource and fills each from
// the store, so the last known state is served even while the cloud is
// unreachable. A resource never synced gets an empty, not-ready cache that
// its first cloud list fills. It is the one way the daemon and the syncers
// turn stored state into cache state.
func Restore(ctx context.Context, store RestoreStore, res []Resource, size int, log *slog.Logger) ([]*versioncache.Cache, error) {
	caches := make([]*versioncache.Cache, 0, len(res))
	for _, r := range res {
		c := versioncache.New(r.GVR, size)
		if err := restoreCache(ctx, store, r, c, log.With("resource", r.Key())); err != nil {
			return nil, fmt.Errorf("restore %s: %w", r.Key(), err)
		}
		log.Info("restored resource", "resource", r.Key(), "ready", c.Ready(), "rv", c.RV())
		caches = append(caches, c)
	}
	return caches, nil
}

// restoreCache loads r's discovery information, objects and event log
// into c.
func restoreCache(ctx context.Context, store RestoreStore, r Resource, c *versioncache.Cache, log *slog.Logger) error {
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
	snap, err := store.LoadSnapshot(ctx, r.Key())
	if err != nil {
		return err
	}
	RestoreCache(c, snap, log)
	return nil
}

// loadState reads and decodes the stored objects and watermark of key,
// skipping (and logging) objects that do not decode.
func loadState(ctx context.Context, store interface {
	Load(ctx context.Context, resource string) ([]metastore.Object, uint64, error)
}, key string, log *slog.Logger) ([]*versioncache.Object, uint64, error) {
	stored, wm, err := store.Load(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	return decodeObjects(stored, log), wm, nil
}
