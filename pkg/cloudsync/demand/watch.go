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

// watchObject reads and watches one object until ctx ends. The first
// watch starts from the stored resume point from (0: none, read the state
// first, see openWatch); a watch that ends is resumed from the last
// resourceVersion it delivered, bookmarks included, as a reflector does;
// only an object never held or an expired resourceVersion reads it again.
// A watch that lost the cloud waits for the outage's one probe
// (afterLoss). Failures are retried with the object's own jittered
// backoff (objectBackoff), so the objects a cloud refused together do not
// come back together.
func (d *Holder) watchObject(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen, from uint64) {
	retry := link.NewRetrierWith(d.cfg.Clock, objectBackoff)
	var lost *outage // the undecided outage this worker is in, if any
	defer func() {
		if lost != nil {
			d.probe.leave(lost, gen)
		}
	}()
	reread, newRef := false, from == 0 // newRef: see newRefRetry
	for ctx.Err() == nil {
		if reread && d.awaitReread(ctx) != nil {
			return
		}
		reread = false
		settled, err := d.rejoin(ctx, &lost, gen, &from)
		if err != nil {
			return
		}
		err = d.listWatchAlive(ctx, lw, r, gen, &from, retry.Reset, settled)
		if settled != nil && lost != nil && errors.Is(err, cloudsync.ErrExpired) {
			d.probe.decide(lost, true)
			lost = nil
		}
		first := newRef
		newRef = false
		switch {
		case ctx.Err() != nil:
			return
		case first && apierrors.IsForbidden(err):
			if link.Sleep(ctx, d.cfg.Clock, newRefDelay()) != nil {
				return
			}
			continue
		case errors.Is(err, cloudsync.ErrExpired):
			// A restarted cloud expires every object's watch at once, on
			// every node: the reads are spread over the relist window.
			from = 0
			if link.Sleep(ctx, d.cfg.Clock, d.cfg.Link.RelistDelay()) != nil {
				return
			}
			continue
		case err == nil:
			continue
		case errors.Is(err, errLinkDead) || cloudsync.MayHideRestore(err):
			// The cloud was lost (a half-open link, or no answer): it may
			// have restarted, which expires every watch of every node.
			switch {
			case from == 0:
				reread = true
			case lost == nil:
				lost = d.probe.join(gen, from)
			}
			if errors.Is(err, errLinkDead) {
				continue
			}
		}
		d.log.Info("watch of referenced object failed, backing off", "kind", r.Kind, "namespace", r.Namespace, "name", r.Name, "err", err)
		if retry.Wait(ctx, err) != nil {
			return
		}
	}
}

// rejoin returns at once unless the worker is in an outage (*lost set);
// then it waits for the outage's answer (afterLoss), leaving it unless
// chosen to probe. The prober gets settled, which records the cloud's
// answer that it still serves the probe's point, and leaves the outage.
func (d *Holder) rejoin(ctx context.Context, lost **outage, gen uint64, from *uint64) (settled func(), err error) {
	o := *lost
	if o == nil {
		return nil, nil
	}
	probing, err := d.afterLoss(ctx, o, gen, from)
	if err != nil || !probing {
		if err == nil {
			*lost = nil
		}
		return nil, err
	}
	return func() { d.probe.decide(o, false); *lost = nil }, nil
}

// afterLoss waits, for a worker that lost the cloud in outage o, until
// the link is up and then for the outage's probe: the resume of the
// newest resume point among the lost workers, made by its own worker
// (probing true, see prober.await). A 410 to it means the cloud's watch
// cache starts above every older point too (a restarted cloud): the
// object is then read again (*from = 0) after a delay within the relist
// window, so a fleet's reads are spread as its relists are (--relist-
// spread, or the cloud's Retry-After), one request per object where a
// resume and the read after its 410 are two. A probe the cloud served
// (a blip) lets every lost object resume from its own point at once.
func (d *Holder) afterLoss(ctx context.Context, o *outage, gen uint64, from *uint64) (probing bool, err error) {
	if err := d.cfg.Link.WaitUp(ctx); err != nil {
		return false, err
	}
	probing, expired, err := d.probe.await(ctx, o, gen)
	if err != nil || probing || !expired {
		return probing, err
	}
	*from = 0
	return false, link.Sleep(ctx, d.cfg.Clock, d.cfg.Link.RelistDelay())
}

// awaitReread waits, before an object whose state was never read is read
// after the cloud was lost, until the link is up and then for the link's
// relist delay, so a fleet's reads after a cloud restart are spread over
// the relist window as its relists are.
func (d *Holder) awaitReread(ctx context.Context) error {
	if err := d.cfg.Link.WaitUp(ctx); err != nil {
		return err
	}
	return link.Sleep(ctx, d.cfg.Clock, d.cfg.Link.RelistDelay())
}

// listWatchAlive runs listWatchOnce, ending it with errLinkDead once the
// link has failed its probes for longer than the watch progress timeout,
// so a watch on a half-open connection does not hang.
func (d *Holder) listWatchAlive(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, reached, settled func()) error {
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
	err := d.listWatchOnce(actx, lw, r, gen, from, reached, settled)
	close(stop)
	wg.Wait()
	cancel(nil)
	if ctx.Err() == nil && errors.Is(context.Cause(actx), errLinkDead) {
		return errLinkDead
	}
	return err
}

// listWatchOnce reads the object's state unless *from is set, then
// streams its changes from *from until the watch ends, advancing *from
// with every event and bookmark. settled, when set (a probe), is called
// once the watch delivered an event, or nothing for probeSettle: the
// cloud still serves *from.
func (d *Holder) listWatchOnce(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, reached, settled func()) error {
	w, err := d.openWatch(ctx, lw, r, gen, from, reached)
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
// state is read first: with one streaming watch, which then goes on as
// the watch (one request where LIST and WATCH are two, as client-go's
// reflectors do), or, once the cloud refused one for r's kind, with a
// LIST. A nil watch and nil error mean ctx ended or the worker stopped.
func (d *Holder) openWatch(ctx context.Context, lw cache.ListerWatcherWithContext, r nodescope.Ref, gen uint64, from *uint64, reached func()) (watch.Interface, error) {
	if *from == 0 && !d.streamOff(r.Kind) {
		w, err := d.streamObject(ctx, lw, r, gen, from, reached)
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
