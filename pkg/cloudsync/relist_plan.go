package cloudsync

import (
	"context"
	"fmt"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// leanFetchParallel bounds the single-object reads of a lean relist
	// in flight: enough to overlap a few round trips, few enough that one
	// syncer takes a small share of the cloud client's request budget.
	leanFetchParallel = 4
	// leanMaxChangedPercent is the share of listed objects, in percent,
	// above which a lean relist gives way to the full list. The cloud
	// gzips a LIST answer but not a single object's (kube-apiserver
	// compresses only answers over 128 KiB), so a changed object read
	// alone costs about 8 times its share of a gzipped full list (as
	// measured with make bench's 9 KB pods); with the metadata list, the
	// lean path moves about as many bytes as the full list at a tenth of
	// the objects changed, and takes longer, one request per object.
	leanMaxChangedPercent = 10
)

// leanItem is one listed object to read: new, or changed since stored.
type leanItem struct {
	namespace, name string
	rv              uint64
	uid             string
}

// leanPlan is what the metadata list says a lean relist must read.
type leanPlan struct {
	// fetch are the new and changed objects, in list order.
	fetch []leanItem
	// changed are the stored objects among fetch.
	changed map[metastore.Name]bool
	// whole are the stored objects whose whole last state a DELETED event
	// carries, in (namespace, name) order: those the list lacks, and those
	// listed under another UID (deleted and created again since).
	whole []metastore.Name
}

// planLean compares the stored keys at watermark wm with the listed
// metadata at listRV. As regressed does for a full list, it refuses a
// list behind the watermark or an object coming back with another UID at
// a version the watermark covers: the full list replaces the local state
// then.
func planLean(keys []metastore.Key, wm uint64, metas []metav1.PartialObjectMetadata, listRV uint64) (leanPlan, error) {
	if listRV < wm {
		return leanPlan{}, fmt.Errorf("%w: list at %d behind the watermark %d", errLeanFallback, listRV, wm)
	}
	held := make(map[metastore.Name]metastore.Key, len(keys))
	for _, k := range keys {
		held[metastore.Name{Namespace: k.Namespace, Name: k.Name}] = k
	}
	p := leanPlan{changed: map[metastore.Name]bool{}}
	recreated := map[metastore.Name]bool{}
	for i := range metas {
		m := &metas[i]
		rv, err := parseRV(m.ResourceVersion, m.Namespace+"/"+m.Name)
		if err != nil {
			return leanPlan{}, err
		}
		n := metastore.Name{Namespace: m.Namespace, Name: m.Name}
		k, ok := held[n]
		delete(held, n)
		switch {
		case ok && rv <= wm && k.UID != string(m.UID):
			return leanPlan{}, fmt.Errorf("%w: %s/%s back with another UID at %d", errLeanFallback, n.Namespace, n.Name, rv)
		case ok && k.RV == rv:
			continue
		case ok:
			p.changed[n] = true
			recreated[n] = k.UID != string(m.UID)
		}
		p.fetch = append(p.fetch, leanItem{namespace: m.Namespace, name: m.Name, rv: rv, uid: string(m.UID)})
	}
	for _, k := range keys {
		if n := (metastore.Name{Namespace: k.Namespace, Name: k.Name}); held[n] == k || recreated[n] {
			p.whole = append(p.whole, n)
		}
	}
	if len(p.fetch)*100 > leanMaxChangedPercent*len(metas) {
		return leanPlan{}, fmt.Errorf("%w: %d of %d objects changed", errLeanFallback, len(p.fetch), len(metas))
	}
	return p, nil
}

// fetchAll reads items at listRV, at most leanFetchParallel at a time, and
// returns them in the order of items. The first error ends the others.
func (s *Syncer) fetchAll(ctx context.Context, items []leanItem, listRV uint64) ([]*versioncache.Object, error) {
	out := make([]*versioncache.Object, len(items))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(leanFetchParallel, len(items)) {
		wg.Go(func() {
			for i := range next {
				o, err := s.fetch(ctx, items[i], listRV)
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

// fetch reads one listed object at listRV. The read is exact, so an object
// deleted or changed after the list still reads as listed; one that does
// not (absent, answered 404, or another version or UID) means the cloud
// contradicts its own list, and the answer is the full list, one
// consistent snapshot, rather than a mix of two moments. A 410 means the
// cloud compacted listRV meanwhile: the full list does not need it.
func (s *Syncer) fetch(ctx context.Context, it leanItem, listRV uint64) (*versioncache.Object, error) {
	o, err := s.cfg.Lean.GetAt(ctx, it.namespace, it.name, listRV)
	switch {
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%w: read %s/%s at %d: %w", errLeanFallback, it.namespace, it.name, listRV, err)
	case err != nil:
		return nil, fmt.Errorf("read %s/%s at %d: %w", it.namespace, it.name, listRV, err)
	case o == nil:
		return nil, fmt.Errorf("%w: %s/%s listed at %d but absent when read at it", errLeanFallback, it.namespace, it.name, listRV)
	case o.RV != it.rv || o.Namespace != it.namespace || o.Name != it.name || uidOf(o.Raw) != it.uid:
		return nil, fmt.Errorf("%w: %s/%s read at %d is not the listed state", errLeanFallback, it.namespace, it.name, listRV)
	}
	return o, nil
}
