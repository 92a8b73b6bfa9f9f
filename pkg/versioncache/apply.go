package versioncache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/watch"
)

// Apply applies a batch of events that is already durable and advances the
// cache to rv. Each event's RV is its Object's RV (Event.RV may be left 0);
// Apply fills Prev from the current state, so a caller's Prev is ignored.
//
// The whole batch is checked first and nothing changes on failure: every
// event needs type Added, Modified or Deleted and an object (else
// ErrInvalidEvent), RVs strictly above the cache RV and non-decreasing,
// and rv at least the last event's RV and the cache RV (else
// ErrRVRegression). When rv is above the last event's RV (or above the
// cache RV for an empty batch) watchers also get a progress marker
// Event{Type: watch.Bookmark, RV: rv}.
//
// Apply never blocks on watchers. It returns ErrNotReady before Replace
// and does nothing after Close.
func (c *Cache) Apply(events []Event, rv uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if !c.ready {
		return ErrNotReady
	}
	batch, err := c.checkLocked(events, rv)
	if err != nil {
		return err
	}
	for i := range batch {
		c.applyEventLocked(&batch[i])
	}
	if rv > c.rv {
		batch = append(batch, Event{Type: watch.Bookmark, RV: rv, shared: newShared(nil, rv)})
		c.rv = rv
	}
	if len(batch) == 0 {
		return nil
	}
	c.advanceLocked()
	c.dispatchLocked(batch)
	return nil
}

// checkLocked validates a batch against the cache RV and returns copies of
// its events with RV set, room left for a progress marker. mu must be held.
func (c *Cache) checkLocked(events []Event, rv uint64) ([]Event, error) {
	batch := make([]Event, len(events), len(events)+1)
	last := c.rv
	for i := range events {
		r, err := eventRV(&events[i])
		if err != nil {
			return nil, fmt.Errorf("apply event %d: %w", i, err)
		}
		// Events of one batch may share an RV: a relist's deletes all
		// carry the list RV, as the cloud no longer knows when each
		// happened. Across batches, RVs strictly increase.
		if r <= c.rv || r < last {
			return nil, fmt.Errorf("apply event %d: rv %d not after %d: %w", i, r, last, ErrRVRegression)
		}
		last = r
		batch[i] = Event{Type: events[i].Type, RV: r, Object: events[i].Object}
	}
	if rv < last {
		return nil, fmt.Errorf("apply: batch rv %d before %d: %w", rv, last, ErrRVRegression)
	}
	return batch, nil
}

// eventRV validates ev's type and object and returns its RV.
func eventRV(ev *Event) (uint64, error) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		return 0, fmt.Errorf("type %q: %w", ev.Type, ErrInvalidEvent)
	}
	if ev.Object == nil {
		return 0, fmt.Errorf("%s without object: %w", ev.Type, ErrInvalidEvent)
	}
	if ev.RV != 0 && ev.RV != ev.Object.RV {
		return 0, fmt.Errorf("event rv %d, object rv %d: %w", ev.RV, ev.Object.RV, ErrInvalidEvent)
	}
	return ev.Object.RV, nil
}

// applyEventLocked fills ev's Prev and frame cache, updates the state and
// appends ev to the ring. mu must be write-locked.
func (c *Cache) applyEventLocked(ev *Event) {
	ev.shared = newShared(ev.Object, ev.RV)
	if ev.Type == watch.Deleted {
		ev.Prev = c.state.remove(keyOf(ev.Object))
	} else {
		ev.Prev = c.state.put(ev.Object)
	}
	if rv, ok := c.ring.push(*ev); ok {
		c.evicted, c.evictedRV = true, rv
	}
	c.rv = ev.RV
}
