package relist

import (
	"context"
	"fmt"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// fetchParallel bounds the single-object reads of a lean relist in
// flight: enough to overlap a few round trips, few enough that one syncer
// takes a small share of the cloud client's request budget.
const fetchParallel = 4

// Fetch reads items from src at listRV, at most fetchParallel at a time, and
// returns them in the order of items. The first error ends the others.
func Fetch(ctx context.Context, src Source, items []Item, listRV uint64) ([]*versioncache.Object, error) {
	out := make([]*versioncache.Object, len(items))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(fetchParallel, len(items)) {
		wg.Go(func() {
			for i := range next {
				o, err := fetchOne(ctx, src, items[i], listRV)
				if err != nil {
					cancel(err)
					continue
				}
				out[i] = o
			}
		})
	}
feed:
	for i := range items {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// fetchOne reads one listed object at listRV. The read is exact, so an object
// deleted or changed after the list still reads as listed; one that does
// not (absent, answered 404, or another version or UID) means the cloud
// contradicts its own list, and the answer is the full list, one
// consistent snapshot, rather than a mix of two moments. A 410 means the
// cloud compacted listRV meanwhile: the full list does not need it.
func fetchOne(ctx context.Context, src Source, it Item, listRV uint64) (*versioncache.Object, error) {
	o, err := src.GetAt(ctx, it.Namespace, it.Name, listRV)
	if err != nil {
		return nil, readError(it.Namespace+"/"+it.Name, listRV, err)
	}
	return o, checkRead(it, o, listRV)
}

// readError wraps the error of a read of what at listRV; one that the full
// list does not share (410: compacted meanwhile; 404) is ErrFallback.
func readError(what string, listRV uint64, err error) error {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: read %s at %d: %w", ErrFallback, what, listRV, err)
	}
	return fmt.Errorf("read %s at %d: %w", what, listRV, err)
}

// checkRead checks that o, it read at listRV, is the listed state.
func checkRead(it Item, o *versioncache.Object, listRV uint64) error {
	switch {
	case o == nil:
		return fmt.Errorf("%w: %s/%s listed at %d but absent when read at it", ErrFallback, it.Namespace, it.Name, listRV)
	case o.RV != it.RV || o.Namespace != it.Namespace || o.Name != it.Name || o.UID != it.UID:
		return fmt.Errorf("%w: %s/%s read at %d is not the listed state", ErrFallback, it.Namespace, it.Name, listRV)
	}
	return nil
}
