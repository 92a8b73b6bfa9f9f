package startup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// restoreWorkers bounds how many resources LoadCaches reads and decodes at
// once: two keep the store's read of one resource overlapping the decode
// of another on a node's few cores, without holding every resource's
// stored bytes in memory at the same time.
const restoreWorkers = 2

// LoadCaches builds one cache of size events per resource and fills each from
// the store, so the last known state is served even while the cloud is
// unreachable. A resource never synced gets an empty, not-ready cache that
// its first cloud list fills. It is the one way the daemon and the syncers
// turn stored state into cache state. Resources are restored concurrently,
// at most restoreWorkers at a time; the caches are in res's order.
func LoadCaches(ctx context.Context, store Store, res []Resource, size int, log *slog.Logger) ([]*versioncache.Cache, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	caches := make([]*versioncache.Cache, len(res))
	errs := make([]error, len(res))
	sem := make(chan struct{}, restoreWorkers)
	var wg sync.WaitGroup
	for i, r := range res {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			caches[i], errs[i] = restoreOne(ctx, store, r, size, log)
			if errs[i] != nil {
				cancel() // the restore fails as a whole: stop the others
			}
		})
	}
	wg.Wait()
	if err := firstCause(errs); err != nil {
		return nil, err
	}
	return caches, nil
}

// firstCause is the first of errs that is not a cancellation, which the
// others may be the result of; else the first error; else nil.
func firstCause(errs []error) error {
	var first error
	for _, err := range errs {
		switch {
		case err == nil:
		case !errors.Is(err, context.Canceled):
			return err
		case first == nil:
			first = err
		}
	}
	return first
}

// restoreOne builds and fills r's cache.
func restoreOne(ctx context.Context, store Store, r Resource, size int, log *slog.Logger) (*versioncache.Cache, error) {
	c := versioncache.New(r.GVR, size)
	if err := restoreCache(ctx, store, r, c, log.With("resource", r.Key)); err != nil {
		return nil, fmt.Errorf("restore %s: %w", r.Key, err)
	}
	log.Info("restored resource", "resource", r.Key, "ready", c.Ready(), "rv", c.RV())
	return c, nil
}

// restoreCache loads r's discovery information, objects and event log
// into c.
func restoreCache(ctx context.Context, store Store, r Resource, c *versioncache.Cache, log *slog.Logger) error {
	raw, err := store.GetMeta(ctx, r.InfoKey)
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
	if ss, ok := store.(snapshotStreamer); ok {
		return restoreStreamed(ctx, ss, r.Key, c, log)
	}
	snap, err := store.LoadSnapshot(ctx, r.Key)
	if err != nil {
		return err
	}
	Fill(c, snap, log)
	return nil
}

// LoadObjects reads and decodes the stored objects and watermark of key,
// skipping (and logging) objects that do not decode.
func LoadObjects(ctx context.Context, store interface {
	Load(ctx context.Context, resource string) ([]metastore.Object, uint64, error)
}, key string, log *slog.Logger) ([]*versioncache.Object, uint64, error) {
	stored, wm, err := store.Load(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	return decodeObjects(stored, log), wm, nil
}
