package versioncache

import (
	"errors"

	"k8s.io/apimachinery/pkg/watch"
)

// maxWatcherBuffer is the most live events a watcher may have queued but
// not yet read (kube-apiserver sizes its cacher's buffers from 10 to 1000
// by resource). A watcher's buffer is the event ring's capacity up to this
// bound: it absorbs a burst, such as one cloud commit of many events or a
// relist's changes, while the client is mid-write, so a healthy watcher is
// evicted only when it falls as far behind as a re-watch could reach. A
// watcher that falls further behind is evicted rather than letting memory
// grow or blocking Apply. Queued events share their objects and frames
// with the ring, so a full buffer costs about 50 bytes per event.
const maxWatcherBuffer = 1000

// minWatcherBuffer is the smallest watcher buffer, whatever the ring's
// capacity: a relist's diff or one cloud commit arrives as one burst, and a
// healthy watcher must absorb a typical one even with a tiny ring.
const minWatcherBuffer = 100

// Watcher is one watch registered on a Cache.
type Watcher struct {
	cache   *Cache  // immutable
	match   matcher // immutable
	initial []Event // immutable
	startRV uint64  // immutable
	// after is immutable: live events with RV <= after are skipped (a
	// watch from an RV above the cache RV).
	after uint64
	// ch is sent to and closed only with cache.watchMu held.
	ch chan Event
	// done is guarded by cache.watchMu; it is true exactly when ch is
	// closed and the watcher is unregistered.
	done bool
	// evicted is closed, under cache.watchMu and before ch, when the
	// watcher is evicted, so a reader that saw ch close sees it.
	evicted chan struct{}
}

// Watch registers a watcher selecting p.
//
// With sendState, Initial holds a synthetic watch.Added event for every
// current object matching p, in key order, and fromRV is
// ignored: callers wanting state at least as new as some RV call
// WaitForRV first.
//
// Without it, Initial holds every cached event with RV > fromRV as p sees
// it (see Predicate filtering in doc.go). fromRV older than the oldest
// servable RV yields a *TooOldError; fromRV 0 is not special (a watch from
// "0" or no RV is a sendState watch). If fromRV is above the cache RV,
// Initial is empty and live events up to fromRV are skipped.
//
// In both cases StartRV is the cache RV at registration and Events
// delivers every later change with no gap or duplicate. It returns
// ErrClosed after Close and ErrNotReady before Replace.
func (c *Cache) Watch(fromRV uint64, sendState bool, p Predicate) (*Watcher, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, ErrClosed
	}
	if !c.ready {
		return nil, ErrNotReady
	}
	w := &Watcher{cache: c, match: newMatcher(p), startRV: c.rv, ch: make(chan Event, c.buffer), evicted: make(chan struct{})}
	if sendState {
		w.initial = c.stateEventsLocked(&w.match)
	} else {
		initial, err := c.eventsSinceLocked(fromRV, &w.match)
		if err != nil {
			return nil, err
		}
		w.initial, w.after = initial, fromRV
	}
	// Apply holds mu for writing while it dispatches, so no event can
	// fall between the snapshot above and this registration.
	c.watchMu.Lock()
	c.watchers[w] = struct{}{}
	c.watchMu.Unlock()
	return w, nil
}

// stateEventsLocked returns a synthetic Added event per current object that
// m matches, in namespace/name order. Like kube's initial events they carry
// no shared frame cache: each is encoded on demand (one copy of Raw), and
// the state does not keep frames alive. mu must be held.
func (c *Cache) stateEventsLocked(m *matcher) []Event {
	entries := c.state.span(m.p.Namespace)
	out := make([]Event, 0, len(entries))
	for _, e := range entries {
		if m.matches(e.obj) {
			out = append(out, Event{Type: watch.Added, RV: e.obj.RV, Object: e.obj})
		}
	}
	return out
}

// oldestLocked returns the oldest RV a watch can start from: one below the
// oldest servable event, as kube's watchCache.getAllEventsSinceLocked
// computes it, but never below an evicted event's RV. When eviction split
// a group of events sharing an RV (a relist's deletes), a watch resuming at
// that RV could miss the evicted members, so it must start after it.
// mu must be held.
func (c *Cache) oldestLocked() uint64 {
	if !c.evicted || c.ring.len() == 0 {
		return c.replaceRV
	}
	first := c.ring.at(0).RV
	if first == c.evictedRV {
		return c.evictedRV + 1
	}
	return max(first-1, c.evictedRV)
}

// eventsSinceLocked returns the cached events after fromRV as m sees them,
// or a *TooOldError. mu must be held.
func (c *Cache) eventsSinceLocked(fromRV uint64, m *matcher) ([]Event, error) {
	if oldest := c.oldestLocked(); fromRV < oldest {
		return nil, &TooOldError{Requested: fromRV, Oldest: oldest}
	}
	var out []Event
	for i := c.resumeIndexLocked(fromRV); i < c.ring.len(); i++ {
		if e, ok := m.view(c.ring.at(i)); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Initial returns the events to deliver before those on Events: the
// current state for a sendState watch, else the replayed events. They do
// not count against the channel buffer.
func (w *Watcher) Initial() []Event { return w.initial }

// StartRV returns the cache RV when the watcher was registered: the
// snapshot RV of a sendState watch's Initial events.
func (w *Watcher) StartRV() uint64 { return w.startRV }

// Events returns the live events. The channel is closed by Stop, by Close,
// by Replace, or by an eviction when the watcher falls more than
// its buffer's worth of events behind (see maxWatcherBuffer); Evicted
// tells the last case apart. Events
// already queued can still be read after the close.
func (w *Watcher) Events() <-chan Event { return w.ch }

// Evicted reports whether the watcher was dropped for falling behind. The
// client should re-watch from the last RV it received.
func (w *Watcher) Evicted() bool {
	select {
	case <-w.evicted:
		return true
	default:
		return false
	}
}

// EvictedC returns a channel closed when the watcher is evicted. A
// server writing its events can then stop waiting on a client that no
// longer reads: the client must re-watch anyway.
func (w *Watcher) EvictedC() <-chan struct{} { return w.evicted }

// Stop unregisters the watcher and closes its channel. It is idempotent
// and safe to call concurrently with Apply, Replace and Close.
func (w *Watcher) Stop() {
	c := w.cache
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.removeWatcherLocked(w, false)
}

// resumeIndexLocked returns the index of the first ring event a watch from
// fromRV replays: the first one after fromRV, except that a group of
// events sharing fromRV (a relist's deletes all carry the list RV) is
// replayed whole. A client that saw only part of such a group before its
// stream ended resumes at that RV and would otherwise miss the rest; the
// members it already has arrive again, which informers ignore (a DELETED
// for an unknown object is dropped). mu must be held.
func (c *Cache) resumeIndexLocked(fromRV uint64) int {
	i := c.ring.firstAfter(fromRV)
	if fromRV == 0 {
		return i
	}
	j := c.ring.firstAfter(fromRV - 1)
	if i-j >= 2 {
		return j
	}
	return i
}

// WatchFromNow returns a watcher of the changes after the cache's current
// RV, or, when that RV can no longer be watched from (a Replace came in
// between), one that first sends the current state. It returns ErrClosed
// after Close, ErrNotReady before Replace.
func (c *Cache) WatchFromNow(p Predicate) (*Watcher, error) {
	w, err := c.Watch(c.RV(), false, p)
	if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrNotReady) {
		return w, err
	}
	return c.Watch(0, true, p)
}
