package forpods

import (
	"context"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// own adds pod to the owners of key's holding, creating it unless the
// namespace holds MaxPerNamespace resources already, and starts it if it
// can. It returns the holding and the sync this call started, or nil.
func (m *Namespaced) own(ctx context.Context, key nsKey, pod door.Pod) (*nsHolding, *nsWorker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.byKey[key]
	if h == nil {
		if h = m.newHoldingLocked(key); h == nil {
			return nil, nil
		}
	}
	if _, ok := h.owners[pod.UID]; !ok {
		h.owners[pod.UID] = pod
		if err := m.saveLocked(ctx, h); err != nil {
			m.log.Warn("owner of a holding not stored", "resource", h.res.Key(), "err", err)
		}
	}
	if h.run != nil || h.dropping {
		return h, nil
	}
	m.startLocked(h)
	return h, h.run
}

// newHoldingLocked creates key's holding with an empty cache; nil when
// the namespace holds enough or its API cannot be built. m.mu must be
// held.
func (m *Namespaced) newHoldingLocked(key nsKey) *nsHolding {
	n := 0
	for k := range m.byKey {
		if k.ns == key.ns {
			n++
		}
	}
	res := cloudsync.Resource{GVR: key.gvr, Namespace: key.ns, ForPods: true}
	if n >= m.cfg.MaxPerNamespace {
		m.stats.refuse(key.ns, capResources)
		m.log.Warn("not held in a namespace: it holds too many resources; reads stay the cloud's",
			"resource", res.Key(), "max", m.cfg.MaxPerNamespace)
		return nil
	}
	cache := versioncache.New(key.gvr, m.cfg.CacheSize)
	api, err := m.cfg.API(cache, key.ns)
	if err != nil {
		m.log.Error("a namespaced holding cannot be served", "resource", res.Key(), "err", err)
		cache.Close()
		return nil
	}
	h := &nsHolding{res: res, cache: cache, api: api, owners: map[string]door.Pod{}}
	m.byKey[key] = h
	return h
}

// startLocked starts h's sync unless it runs, is being dropped, has no
// owner, Run has not started, it stopped lately as gone or over a cap, or
// its namespace or all holdings are at a cap (counted). m.mu must be held.
func (m *Namespaced) startLocked(h *nsHolding) {
	key := nsKey{h.res.GVR, h.res.Namespace}
	now := m.cfg.Clock.Now()
	if h.run != nil || h.dropping || len(h.owners) == 0 || m.runCtx == nil || now.Before(m.retryAt[key]) {
		return
	}
	if cap := m.atCapLocked(key.ns, h); cap != "" {
		m.refuseLocked(h, cap)
		return
	}
	ctx, cancel := context.WithCancelCause(m.runCtx)
	w := &nsWorker{cancel: cancel, done: make(chan struct{})}
	prev := h.last
	h.run, h.last, h.stopped, h.orphaned = w, w, "", time.Time{}
	m.log.Info("holding in a namespace for its pods", "resource", h.res.Key(), "for", nsServiceAccountsLocked(h))
	m.wg.Go(func() { m.runWorker(ctx, h, w, prev) })
}

// refuseLocked counts a refusal of h at cap, keeps it from starting for
// capRetry and, if it holds data, lets the grace drop it. m.mu must be
// held.
func (m *Namespaced) refuseLocked(h *nsHolding, cap string) {
	m.stats.refuse(h.res.Namespace, cap)
	m.log.Warn("not held in a namespace: a cap is reached; reads stay the cloud's", "resource", h.res.Key(), "cap", cap)
	m.stopLocked(h, stopCap, capRetry)
}

// stopLocked stops h's sync for why and keeps it stopped for retry; data
// it holds is dropped after the grace. m.mu must be held.
func (m *Namespaced) stopLocked(h *nsHolding, why string, retry time.Duration) {
	now := m.cfg.Clock.Now()
	if h.run != nil {
		h.run.cancel(nil)
		h.run = nil
	}
	h.stopped = why
	m.retryAt[nsKey{h.res.GVR, h.res.Namespace}] = now.Add(retry)
	if h.orphaned.IsZero() {
		h.orphaned = now
	}
}
