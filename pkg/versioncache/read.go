package versioncache

import "context"

// Get returns the object at namespace/name (nil if absent) and the cache
// RV. It returns ErrNotReady before Replace.
func (c *Cache) Get(namespace, name string) (*Object, uint64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return nil, 0, ErrNotReady
	}
	return c.state.get(objKey{namespace: namespace, name: name}), c.rv, nil
}

// List returns the objects matching p in key order (see compareKeys) and
// the snapshot RV (not the largest item RV). The slice is never nil and is
// the caller's; the Objects are shared and must not be modified. It returns
// ErrNotReady before Replace.
func (c *Cache) List(p Predicate) ([]*Object, uint64, error) {
	m := newMatcher(p)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return nil, 0, ErrNotReady
	}
	out := []*Object{}
	for _, e := range c.state.span(p.Namespace) {
		if m.matches(e.obj) {
			out = append(out, e.obj)
		}
	}
	return out, c.rv, nil
}

// WaitForRV returns nil as soon as the cache is ready with an RV >= rv,
// ctx.Err() if ctx ends first, or ErrClosed if the cache is closed first.
func (c *Cache) WaitForRV(ctx context.Context, rv uint64) error {
	for {
		c.mu.RLock()
		reached := c.ready && c.rv >= rv
		closed := c.closed
		advanced := c.advanced
		c.mu.RUnlock()
		switch {
		case reached:
			return nil
		case closed:
			return ErrClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-advanced:
		}
	}
}
