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
