package forpods

import (
	"context"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/utils/clock"
)

const (
	// reconcileEvery is how often owners are checked against the node's
	// pods besides on every change of them, so an orphaned holding is
	// dropped once its grace is over.
	reconcileEvery = 5 * time.Second
	// scrubRetry is how long a drop waits before retrying a WAL
	// checkpoint that a concurrent reader kept from completing.
	scrubRetry = 5 * time.Second
	// scrubAttempts bounds the retries; a few fit well inside the minute
	// within which a dropped resource's bytes must be gone.
	scrubAttempts = 6
)

// Run resumes the stored holdings once the node's pods are known, follows
// the pods to drop what no pod holds any more, and on return has stopped
// every holding. It returns an error only if the store fails at start.
func (m *Holdings) Run(ctx context.Context) error {
	defer m.wg.Wait()
	defer m.stopAll()
	if err := m.cfg.Pods.WaitForRV(ctx, 1); err != nil {
		return nil // ended or closed before the pods were known
	}
	if err := m.load(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	m.runCtx = ctx
	m.mu.Unlock()
	followPods(ctx, m.cfg.Pods, m.cfg.Clock, m.reconcile)
	return nil
}

// stopAll stops every running holding without dropping it.
func (m *Holdings) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runCtx = nil
	for _, h := range m.byGVR {
		stopLocked(h)
	}
}

// reconcile removes owners that left the node, stops the sync of a
// holding whose last owner left and drops it dropGrace later (stored
// state no owner holds too), and starts owned holdings.
func (m *Holdings) reconcile(ctx context.Context) {
	var drop []*holding
	m.mu.Lock()
	now := m.cfg.Clock.Now()
	for _, h := range m.byGVR {
		m.pruneOwnersLocked(ctx, h)
		switch {
		case h.dropping:
		case len(h.owners) > 0:
			h.orphaned = time.Time{}
			m.startLocked(h)
			if h.run == nil && h.Cache.Ready() { // over the cap: stored state would go stale
				h.dropping = true
				drop = append(drop, h)
			}
		case h.run == nil && !h.Cache.Ready(): // not held
		case h.orphaned.IsZero():
			h.orphaned = now
			stopLocked(h)
		case now.Sub(h.orphaned) >= dropGrace:
			h.dropping, h.orphaned = true, time.Time{}
			drop = append(drop, h)
		}
	}
	m.mu.Unlock()
	for _, h := range drop {
		m.drop(ctx, h)
	}
}

// pruneOwnersLocked removes h's owners no longer on the node. When the
// sync identity is one of them and others remain, the sync restarts on
// the next one's token at once (from the watermark), rather than going on
// with a token bound to a pod that is gone. Holdings.mu must be held.
func (m *Holdings) pruneOwnersLocked(ctx context.Context, h *holding) {
	for uid, p := range h.refused {
		if !m.cfg.PodPresent(p.Namespace, p.Name, uid) {
			delete(h.refused, uid)
		}
	}
	m.pruneGoneLocked(ctx, h)
	if _, ok := h.owners[h.identity.UID]; h.identity.UID == "" || ok {
		return
	}
	h.identity, h.identityToken = door.Pod{}, ""
	if h.run != nil && len(h.owners) > 0 {
		stopLocked(h)
		m.startLocked(h)
	}
}

// pruneGoneLocked removes and stores h's owners no longer on the node.
// Holdings.mu must be held.
func (m *Holdings) pruneGoneLocked(ctx context.Context, h *holding) {
	gone := false
	for uid, p := range h.owners {
		if !m.cfg.PodPresent(p.Namespace, p.Name, uid) {
			delete(h.owners, uid)
			gone = true
			m.log.Info("pod left; no longer holding for it", "resource", h.Resource.Key(),
				"pod", p.Namespace+"/"+p.Name)
		}
	}
	if !gone {
		return
	}
	if err := m.saveLocked(ctx, h); err != nil {
		m.log.Warn("owners of a holding not stored", "resource", h.Resource.Key(), "err", err)
	}
}

// followPods calls reconcile now, on every change of the node's pods and
// every reconcileEvery, until ctx ends or pods closes.
func followPods(ctx context.Context, pods *versioncache.Cache, clk clock.WithTicker, reconcile func(context.Context)) {
	reconcile(ctx)
	tick := clk.NewTicker(reconcileEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		w, err := pods.WatchFromNow(versioncache.Predicate{})
		if err != nil {
			return // closed
		}
		followOnce(ctx, w, tick.C(), reconcile)
		w.Stop()
		reconcile(ctx)
	}
}

// followOnce reconciles on every event of w and every tick until w closes
// or ctx ends.
func followOnce(ctx context.Context, w *versioncache.Watcher, tick <-chan time.Time, reconcile func(context.Context)) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-w.Events():
			if !ok {
				return
			}
		case <-tick:
		}
		reconcile(ctx)
	}
}
