package versioncache

import (
	"sync"
	"sync/atomic"
)

// Cache is the per-resource current state plus a bounded ring of events.
//
// Lock order: mu, then watchMu. Helpers ending in Locked expect mu held
// (read or write as their comment says); those that touch watchers also
// say they expect watchMu.
type Cache struct {
	gvr      GVR // immutable
	capacity int // immutable; the ring's size, > 0
	buffer   int // immutable; each watcher's channel size, > 0

	mu sync.RWMutex
	// Guarded by mu.
	info    Info
	hasInfo bool
	ready   bool // Replace was called; reset only by Forget
	closed  bool // Close was called; never reset
	// rv is the snapshot RV: every event with RV <= rv is applied and none
	// above it. It only changes in Replace and Apply.
	rv uint64
	// replaceRV is the rv of the last Replace; watches from it on are
	// servable while evicted is false.
	replaceRV uint64
	// evicted is true once the ring dropped an event since the last
	// Replace. Then the oldest servable RV is that of the ring's oldest
	// event.
	evicted bool
	// evictedRV is the RV of the newest evicted event since the last
	// Replace. A watch must start at or after it: events of one batch may
	// share an RV, so the ring's oldest event alone does not bound it.
	evictedRV uint64
	state     state
	ring      ring
	// advanced is closed and replaced whenever rv, ready or closed
	// changes, waking WaitForRV callers. Never nil.
	advanced chan struct{}

	watchMu sync.Mutex
	// watchers are the registered watchers, guarded by watchMu. Every
	// member's channel is open; a watcher leaves the set exactly when its
	// channel is closed.
	watchers map[*Watcher]struct{}
	// tooSlow counts watchers evicted for a full buffer.
	tooSlow atomic.Uint64
}

// New returns an empty, not-ready cache for gvr keeping capacity events
// (DefaultCapacity if capacity <= 0). Reads and watches return ErrNotReady
// until Replace.
func New(gvr GVR, capacity int) *Cache {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Cache{
		gvr:      gvr,
		capacity: capacity,
		buffer:   max(min(capacity, maxWatcherBuffer), minWatcherBuffer),
		state:    newState(nil),
		ring:     newRing(capacity),
		advanced: make(chan struct{}),
		watchers: make(map[*Watcher]struct{}),
	}
}

// GVR returns the cached resource.
func (c *Cache) GVR() GVR { return c.gvr }

// SetInfo stores the resource's discovery information (a deep copy).
func (c *Cache) SetInfo(info Info) {
	cp := info.DeepCopy()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.info, c.hasInfo = *cp, true
}

// Info returns a copy of the discovery information and whether SetInfo was
// called.
func (c *Cache) Info() (Info, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.hasInfo {
		return Info{}, false
	}
	return *c.info.DeepCopy(), true
}

// Ready reports whether Replace was called.
func (c *Cache) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// RV returns the snapshot resourceVersion (0 before Replace).
func (c *Cache) RV() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// Replace sets the whole state to objs at resourceVersion rv, empties the
// event ring and marks the cache ready. Watches from any RV >= rv can be
// served afterwards; older ones get a TooOldError. Existing watchers are
// closed (not evicted) so their clients re-watch. Of two objects with the
// same namespace/name the later wins; nil objects are skipped. Replace
// after Close does nothing.
func (c *Cache) Replace(objs []*Object, rv uint64) {
	st := newState(objs) // sort outside the lock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.state = st
	c.rv, c.replaceRV = rv, rv
	c.evicted, c.evictedRV = false, 0
	c.ring.reset()
	c.ready = true
	c.closeWatchersLocked()
	c.advanceLocked()
}

// Close ends every watcher; later Watch calls return ErrClosed and pending
// WaitForRV calls that have not reached their RV return ErrClosed. Reads
// keep serving the last state. Close is idempotent.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.closeWatchersLocked()
	c.advanceLocked()
}

// advanceLocked wakes WaitForRV callers. mu must be write-locked.
func (c *Cache) advanceLocked() {
	close(c.advanced)
	c.advanced = make(chan struct{})
}

// closeWatchersLocked closes and unregisters every watcher. mu must be
// write-locked; it takes watchMu.
func (c *Cache) closeWatchersLocked() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	for w := range c.watchers {
		c.removeWatcherLocked(w, false)
	}
}

// Forget drops the state and the event ring and marks the cache not
// ready, as it was before its first Replace: the resource is no longer
// held. Existing watchers are closed (not evicted) so their clients
// re-watch; reads return ErrNotReady until the next Replace or Restore.
// Forget after Close does nothing.
func (c *Cache) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.state = newState(nil)
	c.rv, c.replaceRV = 0, 0
	c.evicted, c.evictedRV = false, 0
	c.ring.reset()
	c.ready = false
	c.closeWatchersLocked()
	c.advanceLocked()
}
