package demand

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// objectWorker is the running watch of one referenced object.
type objectWorker struct {
	gen    uint64
	cancel context.CancelFunc
}

// objectUpdate is what a worker learned about its object: the answer of a
// list (Listed; Object nil when the object does not exist, RV the list's),
// one watch event, or a bookmark (no Object: nothing changed up to RV).
type objectUpdate struct {
	ref    nodescope.Ref
	gen    uint64
	listed bool
	typ    watch.EventType
	obj    *versioncache.Object
	rv     uint64
}

// startWorker starts watching r by name.
func (d *Holder) startWorker(ctx context.Context, r nodescope.Ref) {
	d.nextGen++
	wctx, cancel := context.WithCancel(ctx)
	w := &objectWorker{gen: d.nextGen, cancel: cancel}
	d.workers[r] = w
	k := d.kind(r.Kind).Resource
	lw := d.cfg.Source(cloudsync.Resource{GVR: k.GVR, Namespace: r.Namespace, FieldSelector: "metadata.name=" + r.Name})
	from := d.resume.rv[r]
	d.wg.Go(func() {
		d.watchObject(wctx, lw, r, w.gen, from)
	})
}

// stopWorker ends r's watch; updates it already sent are ignored.
func (d *Holder) stopWorker(r nodescope.Ref) {
	if w := d.workers[r]; w != nil {
		w.cancel()
		delete(d.workers, r)
	}
}

// watchObject lists and watches one object until ctx ends. The first
// watch starts from the stored resume point from (0: none, list first); a
// watch that ends is resumed from the last resourceVersion it delivered,
// bookmarks included, as a reflector does; only an object never held or
// an expired resourceVersion lists again. Failures are retried with the
// object's own jittered backoff (objectBackoff), so the objects a cloud
// refused together do not come back together.
func (d *Holder) watchObject(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen, from uint64) {
	retry := link.NewRetrierWith(d.cfg.Clock, objectBackoff)
	newRef := from == 0 // see newRefRetry
	for ctx.Err() == nil {
		err := d.listWatchAlive(ctx, lw, r, gen, &from, retry.Reset)
		if ctx.Err() != nil {
			return
		}
		if newRef && apierrors.IsForbidden(err) {
			newRef = false
			if link.Sleep(ctx, d.cfg.Clock, newRefDelay()) != nil {
				return
			}
			continue
		}
		newRef = false
		if errors.Is(err, errLinkDead) {
			// A half-open link: watch again once the prober reaches the
			// cloud, as the syncers do.
			if d.cfg.Link.WaitUp(ctx) != nil || link.Sleep(ctx, d.cfg.Clock, d.cfg.Link.RelistDelay()) != nil {
				return
			}
			continue
		}
		if errors.Is(err, cloudsync.ErrExpired) {
			// A restarted cloud expires every object's watch at once, on
			// every node: the lists are spread over the relist window.
			from = 0
			if link.Sleep(ctx, d.cfg.Clock, d.cfg.Link.RelistDelay()) != nil {
				return
			}
			continue
		}
		if err == nil {
			continue
		}
		d.log.Info("watch of referenced object failed, backing off", "kind", r.Kind, "namespace", r.Namespace, "name", r.Name, "err", err)
		if retry.Wait(ctx, err) != nil {
			return
		}
	}
}

// listWatchAlive runs listWatchOnce, ending it with errLinkDead once the
// link has failed its probes for longer than the watch progress timeout,
// so a watch on a half-open connection does not hang.
func (d *Holder) listWatchAlive(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, reached func()) error {
	dead := d.cfg.Link.Dead()
	actx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-dead:
			cancel(errLinkDead)
		case <-stop:
		}
	})
	err := d.listWatchOnce(actx, lw, r, gen, from, reached)
	close(stop)
	wg.Wait()
	cancel(nil)
	if ctx.Err() == nil && errors.Is(context.Cause(actx), errLinkDead) {
		return errLinkDead
	}
	return err
}

// listWatchOnce lists the object unless *from is set, then streams its
// changes from *from until the watch ends, advancing *from with every
// event and bookmark.
func (d *Holder) listWatchOnce(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, reached func()) error {
	if *from == 0 {
		list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
		if err != nil {
			return cloudsync.Classify("list", err)
		}
		reached()
		u, err := listedUpdate(list)
		if err != nil {
			return err
		}
		u.ref, u.gen = r, gen
		if !d.send(ctx, u) {
			return nil
		}
		*from = u.rv
	}
	timeout := cloudsync.WatchTimeout()
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(*from, 10),
		AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		return cloudsync.Classify("watch", err)
	}
	reached()
	defer w.Stop()
	for {
		var ev watch.Event
		select {
		case <-ctx.Done():
			return nil
		case e, open := <-w.ResultChan():
			if !open {
				return nil
			}
			ev = e
		}
		if err := d.deliver(ctx, r, gen, ev, from); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// deliver hands one watch event of r on to Run's loop and advances *from.
func (d *Holder) deliver(ctx context.Context, r nodescope.Ref, gen uint64, ev watch.Event, from *uint64) error {
	switch ev.Type {
	case watch.Error:
		return cloudsync.Classify("watch event", apierrors.FromObject(ev.Object))
	case watch.Bookmark:
		rv, err := cloudsync.ResourceVersionOf(ev.Object)
		if err != nil {
			return fmt.Errorf("bookmark: %w", err)
		}
		if d.send(ctx, objectUpdate{ref: r, gen: gen, typ: ev.Type, rv: rv}) {
			*from = max(*from, rv)
		}
	case watch.Added, watch.Modified, watch.Deleted:
		o, err := cloudsync.ToObject(ev.Object)
		if err != nil {
			return err
		}
		if d.send(ctx, objectUpdate{ref: r, gen: gen, typ: ev.Type, obj: o, rv: o.RV}) {
			*from = max(*from, o.RV)
		}
	}
	return nil
}

// listedUpdate reads a list of at most one object.
func listedUpdate(list runtime.Object) (objectUpdate, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return objectUpdate{}, fmt.Errorf("list: %w", err)
	}
	rv, err := strconv.ParseUint(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return objectUpdate{}, fmt.Errorf("list resource version %q: %w", lm.GetResourceVersion(), err)
	}
	u := objectUpdate{listed: true, rv: rv}
	err = meta.EachListItem(list, func(item runtime.Object) error {
		o, err := cloudsync.ToObject(item)
		u.obj = o
		return err
	})
	return u, err
}

// send hands u to Run's loop; false when the worker was stopped first.
func (d *Holder) send(ctx context.Context, u objectUpdate) bool {
	select {
	case d.updates <- u:
		return true
	case <-ctx.Done():
		return false
	}
}
