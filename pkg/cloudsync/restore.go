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
		if err := restoreCache(ctx, store, r, c); err != nil {
			return nil, fmt.Errorf("restore %s: %w", r.Key(), err)
		}
		log.Info("restored resource", "resource", r.Key(), "ready", c.Ready(), "rv", c.RV())
		caches = append(caches, c)
	}
	return caches, nil
}

// restoreCache loads r's discovery information and objects into c.
func restoreCache(ctx context.Context, store RestoreStore, r Resource, c Cache) error {
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
	objs, wm, err := loadState(ctx, store, r.Key())
	if err != nil || wm == 0 {
		return err
	}
	c.Replace(objs, wm)
	return nil
}

// loadState reads and decodes the stored objects and watermark of key.
func loadState(ctx context.Context, store interface {
	Load(ctx context.Context, resource string) ([]metastore.Object, uint64, error)
}, key string) ([]*versioncache.Object, uint64, error) {
	stored, wm, err := store.Load(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	objs, err := decodeStored(stored)
	if err != nil {
		return nil, 0, err
	}
	return objs, wm, nil
}

// decodeStored decodes stored objects for the cache.
func decodeStored(stored []metastore.Object) ([]*versioncache.Object, error) {
	objs := make([]*versioncache.Object, 0, len(stored))
	for _, s := range stored {
		o, err := versioncache.NewObject(s.Raw)
		if err != nil {
			return nil, fmt.Errorf("decode stored %s/%s: %w", s.Namespace, s.Name, err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}
