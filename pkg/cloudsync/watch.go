package cloudsync

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	// minWatchTimeout is the shortest cloud watch; like client-go's
	// reflector, each watch lasts a random 5 to 10 minutes so that watches
	// are spread over the cloud's API servers.
	minWatchTimeout = 5 * time.Minute
	// maxBatch bounds how many already-arrived events are committed in one
	// SQLite transaction: large enough to amortise the fsync under bursts,
	// small enough to keep transactions and publish latency short.
	maxBatch = 256
	// groupCommitWindow is how long a batch stays open for more events
	// once a burst is seen (more than one event already waiting), so the
	// burst is committed in one transaction and one fsync rather than
	// several. A lone event is committed at once and never waits. Short
	// against the fsync it saves, so it adds at most that to a burst's
	// delivery.
	groupCommitWindow = 2 * time.Millisecond
)

// WatchTimeout is a cloud watch's timeoutSeconds: a random 5 to 10
// minutes, as client-go's reflector picks.
func WatchTimeout() int64 {
	return int64((minWatchTimeout + rand.N(minWatchTimeout)) / time.Second)
}

// batch is a set of cloud events committed in one transaction.
type batch struct {
	ops    []metastore.Op
	events []versioncache.Event
	rv     uint64 // the watermark after the batch
}

// watch streams cloud events from s.rv until the cloud closes the watch
// (nil), answers 410 (ErrExpired), or fails.
func (s *Syncer) watch(ctx context.Context) error {
	dead := s.cfg.Link.Dead()
	select {
	case <-dead:
		return link.ErrDead
	default:
	}
	timeout := WatchTimeout()
	w, err := s.cfg.ListerWatcher.WatchWithContext(ctx, metav1.ListOptions{
		ResourceVersion:     strconv.FormatUint(s.rv, 10),
		AllowWatchBookmarks: true,
		TimeoutSeconds:      &timeout,
	})
	if err != nil {
		return Classify("watch", err)
	}
	defer w.Stop()
	st := stops{dead: dead, regressed: s.regressed}
	if s.checkRV {
		first, ended, err := s.vetResume(ctx, w.ResultChan(), st)
		if err != nil || ended {
			return err
		}
		if err := s.takeFirst(ctx, first); err != nil {
			return err
		}
	}
	for {
		b, open, err := s.nextBatch(ctx, w.ResultChan(), st)
		if cerr := s.commit(ctx, b); cerr != nil {
			return cerr
		}
		if err != nil || !open {
			return err
		}
	}
}

// takeFirst commits the event vetResume held, if any, on its own.
func (s *Syncer) takeFirst(ctx context.Context, ev *watch.Event) error {
	if ev == nil {
		return nil
	}
	b := batch{rv: s.rv}
	err := s.add(&b, *ev)
	if cerr := s.commit(ctx, b); cerr != nil {
		return cerr
	}
	return err
}

// stops are what ends a cloud watch besides its context and the cloud.
type stops struct {
	// dead is closed when the link has been down too long (link.ErrDead).
	dead <-chan struct{}
	// regressed is closed when a syncer reports the cloud regressed
	// (errRegressedElsewhere).
	regressed <-chan struct{}
}

// nextBatch waits for one event, then takes every event that has already
// arrived, and, when that is a burst, those arriving within
// groupCommitWindow, up to maxBatch in all. open is false once the cloud
// closed the watch. It fails with link.ErrDead or errRegressedElsewhere
// when one of stops is closed while it waits for the first event.
func (s *Syncer) nextBatch(ctx context.Context, ch <-chan watch.Event, st stops) (b batch, open bool, err error) {
	b.rv = s.rv
	select {
	case <-ctx.Done():
		return b, false, nil
	case <-st.dead:
		return b, false, link.ErrDead
	case <-st.regressed:
		return b, false, errRegressedElsewhere
	case ev, ok := <-ch:
		if !ok {
			return b, false, nil
		}
		if err := s.add(&b, ev); err != nil {
			return b, true, err
		}
	}
	seen := 1
	for len(b.events) < maxBatch {
		select {
		case ev, ok := <-ch:
			if !ok {
				return b, false, nil
			}
			seen++
			if err := s.add(&b, ev); err != nil {
				return b, true, err
			}
		default:
			if seen == 1 {
				return b, true, nil
			}
			return s.fillBatch(ctx, ch, b)
		}
	}
	return b, true, nil
}

// fillBatch adds to b the events arriving within groupCommitWindow, up to
// maxBatch in all.
func (s *Syncer) fillBatch(ctx context.Context, ch <-chan watch.Event, b batch) (batch, bool, error) {
	t := s.cfg.Clock.NewTimer(groupCommitWindow)
	defer t.Stop()
	for len(b.events) < maxBatch {
		select {
		case <-ctx.Done():
			return b, true, nil
		case <-t.C():
			return b, true, nil
		case ev, ok := <-ch:
			if !ok {
				return b, false, nil
			}
			if err := s.add(&b, ev); err != nil {
				return b, true, err
			}
		}
	}
	return b, true, nil
}

// add appends one cloud event to b.
func (s *Syncer) add(b *batch, ev watch.Event) error {
	if ev.Type != watch.Error {
		s.cfg.Observer.CloudHeard(s.key)
	}
	switch ev.Type {
	case watch.Error:
		return Classify("watch event", apierrors.FromObject(ev.Object))
	case watch.Bookmark:
		rv, err := ResourceVersionOf(ev.Object)
		if err != nil {
			return fmt.Errorf("bookmark: %w", err)
		}
		b.rv = max(b.rv, rv)
		return nil
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		return fmt.Errorf("unexpected watch event type %q", ev.Type)
	}
	o, err := ToObject(ev.Object)
	if err != nil {
		return err
	}
	if o.RV <= b.rv {
		return nil // already durable: the cloud replayed an older event
	}
	if ev.Type == watch.Added && s.heldWithOtherUID(b, o) {
		return fmt.Errorf("%w: %s/%s added at %d with another UID than the one held", errConflict, o.Namespace, o.Name, o.RV)
	}
	op := UpsertOp(o)
	if ev.Type == watch.Deleted {
		op = DeleteOp(o)
	}
	b.ops = append(b.ops, op)
	b.events = append(b.events, versioncache.Event{Type: ev.Type, RV: o.RV, Object: o})
	b.rv = o.RV
	return nil
}

// commit makes b durable, then visible. If the cache refuses the batch it
// is reloaded from the store, which is the source of truth.
func (s *Syncer) commit(ctx context.Context, b batch) error {
	if b.rv <= s.rv && len(b.events) == 0 {
		return nil
	}
	if err := s.applyStore(ctx, b.ops, b.rv); err != nil {
		return fmt.Errorf("persist batch: %w", err)
	}
	s.rv = b.rv
	if err := s.cfg.Cache.Apply(b.events, b.rv); err != nil {
		s.log.Warn("cache refused batch, reloading it from the store", "err", err)
		return s.reloadCache(ctx)
	}
	return nil
}

// reloadCache replaces the cache's state with the stored one. Local
// watchers are restarted by it and relist if they are behind.
func (s *Syncer) reloadCache(ctx context.Context) error {
	objs, wm, err := startup.LoadObjects(ctx, s.cfg.Store, s.key, s.log)
	if err != nil {
		return fmt.Errorf("reload cache: %w", err)
	}
	s.cfg.Cache.Replace(objs, wm)
	s.rv = wm
	return nil
}

// Classify turns a cloud 410, or a resourceVersion too large for the
// cloud, into ErrExpired (relist, as client-go's reflector does) and wraps
// anything else.
func Classify(what string, err error) error {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return fmt.Errorf("%s: %w", what, ErrExpired)
	}
	// The cloud is behind the watermark (a restored or rebuilt control
	// plane, or one that lags its peers): relist, as a reflector does.
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return fmt.Errorf("%s: resource version too large: %w", what, ErrBehind)
	}
	return fmt.Errorf("%s: %w", what, err)
}
