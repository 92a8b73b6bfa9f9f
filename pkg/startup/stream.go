package startup

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// snapshotStreamer hands over a resource's stored objects while it reads
// them. *metastore.Store is one; LoadCaches uses it when the store is.
type snapshotStreamer interface {
	StreamSnapshot(ctx context.Context, resource string, chunk int, each func([]metastore.Object)) (metastore.Snapshot, error)
}

// streamChunk (objects) is how many stored objects one decode task takes:
// large enough that a task outweighs its goroutine, small enough that
// decoding starts soon after the read does.
const streamChunk = minDecodeShare

// restoreStreamed fills c like Fill, decoding each slice of
// objects on up to GOMAXPROCS goroutines while the store reads the next:
// the read and the decode, each a large share of a cold start, overlap.
func restoreStreamed(ctx context.Context, store snapshotStreamer, key string, c *versioncache.Cache, log *slog.Logger) error {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var parts []*[]*versioncache.Object // one per slice, in read order; each written by its task only
	snap, err := store.StreamSnapshot(ctx, key, streamChunk, func(stored []metastore.Object) {
		part := new([]*versioncache.Object)
		parts = append(parts, part)
		sem <- struct{}{} // a slow decode slows the read rather than piling up slices
		wg.Go(func() {
			defer func() { <-sem }()
			*part = decodeObjects(stored, log)
		})
	})
	wg.Wait()
	if err != nil || snap.Watermark == 0 {
		return err // never synced: the cache stays empty and not ready
	}
	objs := make([]*versioncache.Object, 0, len(parts)*streamChunk)
	for _, p := range parts {
		objs = append(objs, *p...)
	}
	restoreDecoded(c, snap, slices.Clip(objs), log)
	return nil
}
