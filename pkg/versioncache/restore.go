package versioncache

import "fmt"

// Restore is Replace for a cache reloaded from durable storage after a
// restart: it sets the state to objs at rv and fills the event ring with
// events, the durable changes with an RV above floor up to rv, oldest
// first, each with its Prev (the object's state before it, nil for none).
// Watches from any RV from floor on are then served with exactly the
// events after it, as before the restart; older ones get a TooOldError.
// If events outnumber the ring, the oldest are evicted as by Apply.
//
// Events must be of type Added, Modified or Deleted with an object (else
// ErrInvalidEvent), with RVs above floor, non-decreasing and up to rv,
// and floor must not exceed rv (else ErrRVRegression). On error nothing
// changes. Existing watchers are closed, as by Replace; after Close it
// does nothing.
func (c *Cache) Restore(objs []*Object, rv uint64, events []Event, floor uint64) error {
	batch, err := checkRestore(events, rv, floor)
	if err != nil {
		return err
	}
	st := newState(objs) // sort outside the lock
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.state = st
	c.rv, c.replaceRV = rv, floor
	c.evicted, c.evictedRV = false, 0
	c.ring.reset()
	for _, ev := range batch {
		if evictedRV, ok := c.ring.push(ev); ok {
			c.evicted, c.evictedRV = true, evictedRV
		}
	}
	c.ready = true
	c.closeWatchersLocked()
	c.advanceLocked()
	return nil
}

// checkRestore validates events for Restore and returns copies with RV
// and frame caches set.
func checkRestore(events []Event, rv, floor uint64) ([]Event, error) {
	if floor > rv {
		return nil, fmt.Errorf("restore: floor %d above rv %d: %w", floor, rv, ErrRVRegression)
	}
	out := make([]Event, len(events))
	last := floor + 1
	for i := range events {
		r, err := eventRV(&events[i])
		if err != nil {
			return nil, fmt.Errorf("restore event %d: %w", i, err)
		}
		if r < last || r > rv {
			return nil, fmt.Errorf("restore event %d: rv %d outside [%d, %d]: %w", i, r, last, rv, ErrRVRegression)
		}
		last = r
		e := events[i]
		out[i] = Event{Type: e.Type, RV: r, Object: e.Object, Prev: e.Prev, shared: newShared(e.Object, r)}
	}
	return out, nil
}
