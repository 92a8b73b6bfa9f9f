package versioncache

// Stats is a point-in-time view of a cache for metrics and status.
type Stats struct {
	Ready   bool   // Replace was called
	RV      uint64 // the snapshot resourceVersion
	Objects int    // objects in the current state
	// Bytes is the current objects' JSON size, as the cloud sent them.
	Bytes  int64
	Events int // events held in the ring
	// Watchers is the number of registered watchers.
	Watchers int
	// TooSlow counts watchers closed because their buffer was full, since
	// the cache was created.
	TooSlow uint64
}

// Stats returns the cache's current figures.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	st := Stats{Ready: c.ready, RV: c.rv, Objects: len(c.state.sorted), Bytes: c.state.bytes, Events: c.ring.len()}
	c.mu.RUnlock()
	c.watchMu.Lock()
	st.Watchers = len(c.watchers)
	c.watchMu.Unlock()
	st.TooSlow = c.tooSlow.Load()
	return st
}
