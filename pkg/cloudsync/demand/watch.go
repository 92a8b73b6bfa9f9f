package demand

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
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

// listWatchAlive runs listWatchOnce, ending it with errLinkDead once the
// link has failed its probes for longer than the watch progress timeout,
// so a watch on a half-open connection does not hang.
func (d *Holder) listWatchAlive(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, floor uint64, reached, settled func()) error {
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
	err := d.listWatchOnce(actx, lw, r, gen, from, floor, reached, settled)
	close(stop)
	wg.Wait()
	cancel(nil)
	if ctx.Err() == nil && errors.Is(context.Cause(actx), errLinkDead) {
		return errLinkDead
	}
	return err
}

// listWatchOnce reads the object's state (not older than floor) unless
// *from is set, then streams its changes from *from until the watch ends,
// advancing *from with every event and bookmark. settled, when set (a
// probe), is called once the watch delivered an event, or nothing for
// probeSettle: the cloud still serves *from.
func (d *Holder) listWatchOnce(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, floor uint64, reached, settled func()) error {
	w, err := d.openWatch(ctx, lw, r, gen, from, floor, reached)
	if err != nil || w == nil {
		return err
	}
	defer w.Stop()
	var settle <-chan time.Time
	if settled != nil {
		t := d.cfg.Clock.NewTimer(probeSettle)
		defer t.Stop()
		settle = t.C()
	}
	for {
		var ev watch.Event
		select {
		case <-ctx.Done():
			return nil
		case <-settle:
			settled()
			settled, settle = nil, nil
			continue
		case e, open := <-w.ResultChan():
			if !open {
				return nil
			}
			ev = e
		}
		if err := d.deliver(ctx, r, gen, ev, from); err != nil || ctx.Err() != nil {
			return err
		}
		if settled != nil {
			settled()
			settled, settle = nil, nil
		}
	}
}

// openWatch returns r's watch from *from. Without a resume point the
// state is read first: with one streaming watch (not older than floor),
// which then goes on as the watch (one request where LIST and WATCH are
// two, as client-go's reflectors do), or, once the cloud refused one for
// r's kind, with a LIST. A nil watch and nil error mean ctx ended or the
// worker stopped.
func (d *Holder) openWatch(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, floor uint64, reached func()) (watch.Interface, error) {
	if *from == 0 && !d.streamOff(r.Kind) {
		w, err := d.streamObject(ctx, lw, r, gen, from, floor, reached)
		if !errors.Is(err, errStreamRefused) {
			return w, err
		}
		if !d.noStream[r.Kind].Swap(true) {
			d.log.Info("cloud refused a streaming watch, listing instead", "kind", r.Kind, "err", err)
		}
	}
	if *from == 0 {
		if ok, err := d.listObject(ctx, lw, r, gen, from, reached); err != nil || !ok {
			return nil, err
		}
	}
	timeout := cloudsync.WatchTimeout()
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(*from, 10),
		AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		return nil, cloudsync.Classify("watch", err)
	}
	reached()
	return w, nil
}

// listObject lists r, sends the answer to Run's loop and sets *from to
// the list's resourceVersion; false when the worker was stopped first.
func (d *Holder) listObject(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, reached func()) (bool, error) {
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return false, cloudsync.Classify("list", err)
	}
	reached()
	u, err := listedUpdate(list)
	if err != nil {
		return false, err
	}
	u.ref, u.gen = r, gen
	if !d.send(ctx, u) {
		return false, nil
	}
	*from = u.rv
	return true, nil
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
