package forpods

import (
	"context"
	"fmt"
)

// drop stops h's sync, deletes its rows and watermark and its cache's
// state (local watchers are closed and re-watch through the cloud), and
// scrubs the deleted bytes from the write-ahead log. h.dropping is set.
func (m *Holdings) drop(ctx context.Context, h *holding) {
	m.mu.Lock()
	stopLocked(h)
	w := h.last
	m.mu.Unlock()
	if w != nil {
		<-w.done
	}
	err := m.dropState(ctx, h)
	m.mu.Lock()
	h.dropping = false
	m.mu.Unlock()
	if err != nil {
		// Unless only the scrub failed, the cache is still ready and
		// the next reconcile drops it again.
		m.log.Error("dropping a resource no pod holds failed", "resource", h.Resource.Key(), "err", err)
		return
	}
	m.log.Info("dropped a resource no pod on this node holds", "resource", h.Resource.Key())
}

// dropState removes h's stored and cached state and scrubs the WAL.
func (m *Holdings) dropState(ctx context.Context, h *holding) error {
	key := h.Resource.Key()
	if err := m.cfg.Store.Drop(ctx, key); err != nil {
		return fmt.Errorf("drop %s: %w", key, err)
	}
	if err := m.cfg.Store.DeleteMeta(ctx, OwnersKey(key)); err != nil {
		return fmt.Errorf("delete owners of %s: %w", key, err)
	}
	h.Cache.Forget()
	var err error
	for range scrubAttempts {
		if err = m.cfg.Store.Scrub(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.cfg.Clock.After(scrubRetry):
		}
	}
	return fmt.Errorf("scrub: %w", err)
}
