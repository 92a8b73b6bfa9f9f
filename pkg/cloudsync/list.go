package cloudsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/relist"
	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// listPageSize is the cloud LIST page size, as client-go's reflector uses.
const listPageSize = 500

// relist lists the resource from the cloud and makes the result durable
// and visible. On a first sync the cache is filled; later, the difference
// against the stored state is published as events so local watchers
// continue without relisting.
func (s *Syncer) relist(ctx context.Context) error {
	if err := s.cfg.Link.AcquireRelist(ctx); err != nil {
		return err
	}
	defer s.cfg.Link.ReleaseRelist()
	if s.leanUsable() { // see lean.go
		err := s.relistLean(ctx)
		if !errors.Is(err, relist.ErrFallback) {
			return err
		}
		s.log.Info("listing full objects", "reason", err)
	}
	listed, listRV, err := s.list(ctx)
	if err != nil {
		return err
	}
	s.cfg.Observer.CloudHeard(s.key)
	s.cfg.Observer.RelistBytes(s.key, rawBytes(listed))
	stored, wm, err := s.cfg.Store.Load(ctx, s.key)
	if err != nil {
		return fmt.Errorf("relist: %w", err)
	}
	if regressed(stored, wm, listed, listRV) {
		s.log.Error("CLOUD RESOURCE VERSIONS WENT BACKWARDS: the control plane was restored from a backup or "+
			"wiped; replacing the local state with the cloud's", "listRV", listRV, "watermark", wm)
		return s.replaceState(ctx, listed, listRV)
	}
	events, err := diff(stored, listed, listRV)
	if err != nil {
		return fmt.Errorf("relist: %w", err)
	}
	if err := s.applyStore(ctx, eventOps(events), listRV); err != nil {
		return fmt.Errorf("persist relist: %w", err)
	}
	s.rv = listRV
	s.log.Info("relisted", "objects", len(listed), "changes", len(events), "rv", listRV)
	if !s.cfg.Cache.Ready() || !publishable(events, wm) {
		s.cfg.Cache.Replace(listed, listRV)
		return nil
	}
	if err := s.cfg.Cache.Apply(events, listRV); err != nil {
		s.log.Warn("cache refused relist diff, reloading it from the store", "err", err)
		return s.reloadCache(ctx)
	}
	return nil
}

// list reads every object from the cloud in pages of listPageSize. The
// next page is asked for while one is turned into stored objects, so the
// cloud's encoding of at most two pages is held at a time. As client-go's
// pager does, a continue token the cloud expired meanwhile restarts the
// list in one request.
func (s *Syncer) list(ctx context.Context) ([]*versioncache.Object, uint64, error) {
	ctx, cancel := context.WithCancel(ctx) // ends a page fetch still under way
	defer cancel()
	opts := metav1.ListOptions{Limit: listPageSize}
	var objs []*versioncache.Object
	var listRV uint64
	next := s.fetchPage(ctx, opts)
	for {
		res := <-next
		page, err := res.page, res.err
		if opts.Continue != "" && apierrors.IsResourceExpired(err) {
			objs, opts = nil, metav1.ListOptions{}
			next = s.fetchPage(ctx, opts)
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("list: %w", err)
		}
		lm, err := meta.ListAccessor(page)
		if err != nil {
			return nil, 0, fmt.Errorf("list: %w", err)
		}
		if opts.Continue == "" {
			if listRV, err = strconv.ParseUint(lm.GetResourceVersion(), 10, 64); err != nil {
				return nil, 0, fmt.Errorf("list resource version %q: %w", lm.GetResourceVersion(), err)
			}
		}
		more := lm.GetContinue() != ""
		if more {
			opts.Continue = lm.GetContinue()
			next = s.fetchPage(ctx, opts)
		}
		if objs, err = appendItems(objs, page); err != nil {
			return nil, 0, fmt.Errorf("list: %w", err)
		}
		if !more {
			return objs, listRV, nil
		}
	}
}

// pageResult is the outcome of one LIST request.
type pageResult struct {
	page runtime.Object
	err  error
}

// fetchPage asks for one LIST page in the background; the channel
// delivers it, and never blocks the sender.
func (s *Syncer) fetchPage(ctx context.Context, opts metav1.ListOptions) <-chan pageResult {
	ch := make(chan pageResult, 1)
	go func() {
		page, err := s.cfg.ListerWatcher.ListWithContext(ctx, opts)
		ch <- pageResult{page: page, err: err}
	}()
	return ch
}

// appendItems appends the stored form of every item of a list page.
func appendItems(objs []*versioncache.Object, page runtime.Object) ([]*versioncache.Object, error) {
	err := meta.EachListItem(page, func(item runtime.Object) error {
		o, err := ToObject(item)
		if err != nil {
			return err
		}
		objs = append(objs, o)
		return nil
	})
	return objs, err
}

// eventOps returns the store operations that make events durable.
func eventOps(events []versioncache.Event) []metastore.Op {
	ops := make([]metastore.Op, 0, len(events))
	for _, ev := range events {
		if ev.Type == watch.Deleted {
			ops = append(ops, DeleteOp(ev.Object))
		} else {
			ops = append(ops, UpsertOp(ev.Object))
		}
	}
	return ops
}

// diff returns the events that turn the stored state into the listed one:
// ADDED and MODIFIED (or, for a re-created object, DELETED and ADDED) in
// resourceVersion order, then a DELETED for every stored object the list
// lacks, carrying its last state at listRV (the cloud no longer knows when
// it was deleted).
func diff(stored []metastore.Object, listed []*versioncache.Object, listRV uint64) ([]versioncache.Event, error) {
	type key struct{ ns, name string }
	prev := make(map[key]metastore.Object, len(stored))
	for _, o := range stored {
		prev[key{o.Namespace, o.Name}] = o
	}
	var events []versioncache.Event
	for _, o := range listed {
		k := key{o.Namespace, o.Name}
		p, ok := prev[k]
		delete(prev, k)
		var err error
		if events, err = appendChange(events, p, ok, o); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(events, func(a, b versioncache.Event) int { return cmp.Compare(a.RV, b.RV) })
	// stored is ordered by namespace and name, so deletes are too.
	for _, p := range stored {
		if _, gone := prev[key{p.Namespace, p.Name}]; !gone {
			continue
		}
		last, err := versioncache.NewObject(p.Raw)
		if err != nil {
			return nil, fmt.Errorf("decode stored %s/%s: %w", p.Namespace, p.Name, err)
		}
		if last, err = last.WithRV(listRV); err != nil {
			return nil, err
		}
		events = append(events, versioncache.Event{Type: watch.Deleted, RV: listRV, Object: last})
	}
	return events, nil
}

// appendChange appends the events that turn stored object p (held when
// ok) into listed o: none when o is unchanged, ADDED when new, MODIFIED when
// changed. An o with another UID was deleted and created again since p: as a
// watch would have shown it, that is a DELETED carrying p's last state, then
// an ADDED, both at o's resourceVersion (the deletion's is unknown, and is
// at most o's), never a MODIFIED that changes the UID. A p without its
// bytes is the same object as o: the lean relist passes only the key of an
// object it compared by UID.
func appendChange(events []versioncache.Event, p metastore.Object, ok bool, o *versioncache.Object) ([]versioncache.Event, error) {
	switch {
	case !ok:
		return append(events, versioncache.Event{Type: watch.Added, RV: o.RV, Object: o}), nil
	case p.RV == o.RV:
		return events, nil
	case p.Raw == nil || jsonscan.UID(p.Raw) == o.UID:
		return append(events, versioncache.Event{Type: watch.Modified, RV: o.RV, Object: o}), nil
	}
	last, err := versioncache.NewObject(p.Raw)
	if err == nil {
		last, err = last.WithRV(o.RV)
	}
	if err != nil {
		return nil, fmt.Errorf("decode stored %s/%s: %w", p.Namespace, p.Name, err)
	}
	return append(events, versioncache.Event{Type: watch.Deleted, RV: o.RV, Object: last},
		versioncache.Event{Type: watch.Added, RV: o.RV, Object: o}), nil
}

// publishable reports whether events can be applied on top of a cache at
// watermark wm: each must be newer than wm. A listed object older than the
// watermark that the store lacks means the stored state cannot be trusted
// as a base, and the cache is replaced instead.
func publishable(events []versioncache.Event, wm uint64) bool {
	for _, ev := range events {
		if ev.RV <= wm {
			return false
		}
	}
	return true
}
