package versioncache

import "k8s.io/apimachinery/pkg/watch"

// dispatchLocked offers a batch of applied events to every watcher without
// blocking. mu must be write-locked, so no watcher registers mid-batch; it
// takes watchMu.
func (c *Cache) dispatchLocked(batch []Event) {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	for w := range c.watchers {
		for i := range batch {
			if !c.offerLocked(w, &batch[i]) {
				break
			}
		}
	}
}

// offerLocked queues the view of e that w selects. If w's buffer is full,
// a progress marker is dropped (a later event or marker carries a newer
// RV, as kube's cacher drops bookmarks), and any other event evicts w. It
// reports false if w was evicted. watchMu must be held.
func (c *Cache) offerLocked(w *Watcher, e *Event) bool {
	if e.RV <= w.after {
		return true
	}
	out, ok := w.match.view(e)
	if !ok {
		return true
	}
	select {
	case w.ch <- out:
		return true
	default:
	}
	if out.Type == watch.Bookmark {
		return true
	}
	c.removeWatcherLocked(w, true)
	return false
}

// removeWatcherLocked unregisters w and closes its channel, once. watchMu
// must be held.
func (c *Cache) removeWatcherLocked(w *Watcher, evicted bool) {
	if w.done {
		return
	}
	w.done = true
	delete(c.watchers, w)
	if evicted {
		close(w.evicted)
		c.tooSlow.Add(1)
	}
	close(w.ch)
}
