package demand

import (
	"context"
	"errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// One worker's loop: read its object, then wait for what the read's end
// calls for (a restarted cloud's relist window, an outage's probe, the
// object's backoff) before it reads again.

// objectWatch is one worker's state across the watches of its object;
// only its worker's goroutine reads or writes it.
type objectWatch struct {
	lw    cache.ListerWatcherWithContext
	ref   nodescope.Ref
	gen   uint64
	retry *link.Retrier
	// from is the resume point: 0 reads the state first (openWatch).
	from uint64
	// floor is the resume point the cloud expired (a restarted cloud's
	// watch cache starts above it): the state held is at least that
	// fresh, so it is read again as not older than it (streamOptions);
	// 0 reads the latest.
	floor uint64
	// lost is the undecided outage this worker is in, if any.
	lost *outage
	// reread waits for the link and the relist delay before the state is
	// read again (awaitReread).
	reread bool
	// newRef marks a new reference's first read (newRefRetry); every
	// other read is of an object the node holds and serves, and is
	// cloudsync.Background.
	newRef bool
	// resumed is the point the previous run stored, until the first
	// read ends: a 410 while from is still it answers this start, not a
	// cloud restart every node hears at once (afterRead).
	resumed uint64
}

// atStart says whether w's next or last read is the start's own resume
// from the point the previous run stored.
func (w *objectWatch) atStart() bool {
	return w.resumed != 0 && w.from == w.resumed
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
	w := &objectWatch{lw: lw, ref: r, gen: gen, from: from, newRef: from == 0, resumed: from,
		retry: link.NewRetrierWith(d.cfg.Clock, objectBackoff)}
	defer func() {
		if w.lost != nil {
			d.probe.leave(w.lost, gen)
		}
	}()
	for ctx.Err() == nil {
		stopped, err := d.readOnce(ctx, w)
		if stopped {
			return
		}
		first := w.newRef
		w.newRef = false
		stopped = d.afterRead(ctx, w, err, first)
		w.resumed = 0
		if stopped {
			return
		}
	}
}

// readOnce waits out what the last read left (a reread after the cloud
// was lost, an outage's answer) and then lists or watches w's object
// until that read ends; stopped when ctx ended while waiting. A probe
// answered 410 decides its outage: the cloud restarted.
func (d *Holder) readOnce(ctx context.Context, w *objectWatch) (stopped bool, err error) {
	if w.reread && d.awaitReread(ctx) != nil {
		return true, nil
	}
	w.reread = false
	settled, err := d.rejoin(ctx, &w.lost, w.gen, &w.from, &w.floor)
	if err != nil {
		return true, nil
	}
	if !w.newRef {
		// The object is held and served: its read waits behind what the
		// node is waiting for.
		ctx = cloudsync.Background(ctx)
	}
	if w.atStart() {
		ctx = d.dropExpiredResume(ctx, w.ref.Kind, w.from)
	}
	err = d.listWatchAlive(ctx, w.lw, w.ref, w.gen, &w.from, w.floor, w.retry.Reset, settled)
	if settled != nil && w.lost != nil && errors.Is(err, cloudsync.ErrExpired) {
		d.probe.decide(w.lost, true)
		w.lost = nil
	}
	return false, err
}

// afterRead waits after a read of w's object ended with err (first: a
// new reference's first read) until the next may start; stopped when ctx
// ended. A refused new reference is read again soon (newRefDelay), an
// expired point after the relist delay, a lost cloud after its outage's
// answer (lostCloud), anything else after the object's backoff.
func (d *Holder) afterRead(ctx context.Context, w *objectWatch, err error, first bool) (stopped bool) {
	switch {
	case ctx.Err() != nil:
		return true
	case first && apierrors.IsForbidden(err):
		return link.Sleep(ctx, d.cfg.Clock, newRefDelay()) != nil
	case errors.Is(err, cloudsync.ErrExpired):
		// A restarted cloud expires every object's watch at once, on
		// every node: the reads are spread over the relist window. The
		// start's own resume, expired before it delivered anything, is
		// read again at once, as every read of a start is, paced by the
		// opening limit: spread, a node's watches would open over the
		// whole window, and kube-apiserver, which times a watch's
		// bookmarks from the second it opened, would write them in as
		// many bursts a minute.
		atStart := w.atStart()
		if atStart {
			d.startExpiredAt(w.ref.Kind, w.from)
		}
		w.floor, w.from = max(w.floor, w.from), 0
		if atStart {
			return false
		}
		return link.Sleep(ctx, d.cfg.Clock, d.cfg.Link.RelistDelay()) != nil
	case w.floor > 0 && errors.Is(err, cloudsync.ErrBehind):
		// The cloud has not reached the floor (a restored etcd): the
		// latest state is read instead, at once, as a reflector does.
		w.floor = 0
		return false
	case err == nil:
		return false
	case errors.Is(err, errLinkDead) || cloudsync.MayHideRestore(err):
		d.lostCloud(w)
		if errors.Is(err, errLinkDead) {
			return false
		}
	}
	r := w.ref
	d.log.Info("watch of referenced object failed, backing off", "kind", r.Kind, "namespace", r.Namespace, "name", r.Name, "err", err)
	return w.retry.Wait(ctx, err) != nil
}

// lostCloud records that w's watch lost the cloud (a half-open link, or
// no answer), which may have restarted and so expired every watch of
// every node: an object never read is read again once the link is up,
// one with a resume point joins the outage's probe.
func (d *Holder) lostCloud(w *objectWatch) {
	switch {
	case w.from == 0:
		w.reread = true
	case w.lost == nil:
		w.lost = d.probe.join(w.gen, w.from)
	}
}

// rejoin returns at once unless the worker is in an outage (*lost set);
// then it waits for the outage's answer (afterLoss), leaving it unless
// chosen to probe. The prober gets settled, which records the cloud's
// answer that it still serves the probe's point, and leaves the outage.
func (d *Holder) rejoin(ctx context.Context, lost **outage, gen uint64, from, floor *uint64) (settled func(), err error) {
	o := *lost
	if o == nil {
		return nil, nil
	}
	probing, err := d.afterLoss(ctx, o, gen, from, floor)
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
// object is then read again (*from = 0), not older than its point
// (*floor), after a delay within the relist window, so a fleet's reads
// are spread as its relists are (--relist-spread, or the cloud's
// Retry-After), one request per object where a resume and the read after
// its 410 are two. A probe the cloud served (a blip) lets every lost
// object resume from its own point at once.
func (d *Holder) afterLoss(ctx context.Context, o *outage, gen uint64, from, floor *uint64) (probing bool, err error) {
	if err := d.cfg.Link.WaitUp(ctx); err != nil {
		return false, err
	}
	probing, expired, err := d.probe.await(ctx, o, gen)
	if err != nil || probing || !expired {
		return probing, err
	}
	*floor, *from = max(*floor, *from), 0
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
