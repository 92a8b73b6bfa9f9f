package forpods

import (
	"context"
	"errors"
	"time"

	"golang.org/x/oauth2"
	"k8s.io/client-go/transport"
)

const (
	// goneRetry is how long a holding whose resource the cloud stopped
	// serving (or allowing) stays stopped: reads are forwarded meanwhile,
	// and an informer's relists do not restart a sync every few seconds.
	goneRetry = 5 * time.Minute
	// capRetry is the same for a holding refused at a cap: its namespace
	// has to shrink first, and each try may cost a full list.
	capRetry = 5 * time.Minute
)

// nsWorker is one running namespaced sync.
type nsWorker struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// NamespacedSyncer keeps h in sync with the cloud on tokens until ctx ends;
// guard is asked before each commit with the objects and bytes h would
// hold after it. It returns an error wrapping ErrGone when the cloud stops
// serving or allowing the resource, and one wrapping ErrOverCap when guard
// refused a commit; nil when ctx ended.
type NamespacedSyncer func(ctx context.Context, h Held, tokens oauth2.TokenSource, guard Guard) error

// Guard says whether a holding may hold objects objects of bytes bytes; a
// refusal wraps ErrOverCap.
type Guard func(objects int, bytes int64) error

// ErrGone means the cloud no longer serves a held resource in that
// namespace to its sync identity: a custom resource whose definition was
// deleted or stopped serving the version (404), or a Role taken away (403).
var ErrGone = errors.New("the cloud no longer serves the resource to its holders")

// runWorker runs h's sync w after prev ended, and stops h when the sync
// ends as gone or over a cap.
func (m *Namespaced) runWorker(ctx context.Context, h *nsHolding, w *nsWorker, prev *nsWorker) {
	defer close(w.done)
	if prev != nil {
		<-prev.done // one sync of a holding at a time
	}
	ts := transport.NewCachedTokenSource(&nsTokens{m: m, h: h})
	err := m.cfg.Sync(ctx, Held{Resource: h.res, Cache: h.cache}, ts, m.guard(h))
	m.mu.Lock()
	defer m.mu.Unlock()
	var over *capError
	switch {
	case err == nil:
	case errors.As(err, &over):
		if h.run == w {
			m.refuseLocked(h, over.cap)
		}
	case errors.Is(err, ErrGone):
		m.log.Warn("the cloud stopped serving a namespaced holding; reads go to the cloud", "resource", h.res.Key(), "err", err)
		if h.run == w {
			m.stopLocked(h, stopGone, goneRetry)
		}
	default: // never left marked running: its data would go stale
		m.log.Error("sync of a namespaced holding stopped", "resource", h.res.Key(), "err", err)
		if h.run == w {
			m.stopLocked(h, stopFailed, goneRetry)
		}
	}
}

// Run resumes the stored holdings once the node's pods are known, follows
// the pods to drop what no pod holds any more, and on return has stopped
// every holding.
func (m *Namespaced) Run(ctx context.Context) error {
	defer m.wg.Wait()
	defer m.stopAll()
	if err := m.cfg.Pods.WaitForRV(ctx, 1); err != nil {
		return nil // ended or closed before the pods were known
	}
	m.mu.Lock()
	m.runCtx = ctx
	m.mu.Unlock()
	followPods(ctx, m.cfg.Pods, m.cfg.Clock, m.reconcile)
	return nil
}

// stopAll stops every running holding without dropping it.
func (m *Namespaced) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runCtx = nil
	for _, h := range m.byKey {
		if h.run != nil {
			h.run.cancel(nil)
			h.run = nil
		}
	}
}

// reconcile removes owners that left the node, stops a holding whose last
// owner left, starts owned ones, stops holdings past a cap, and drops what
// stayed stopped for dropGrace.
func (m *Namespaced) reconcile(ctx context.Context) {
	var drop []*nsHolding
	m.mu.Lock()
	now := m.cfg.Clock.Now()
	for _, h := range m.byKey {
		m.pruneOwnersLocked(ctx, h)
		switch {
		case h.dropping:
		case h.run != nil && len(h.owners) == 0:
			m.stopLocked(h, "", 0)
		case h.run != nil:
		default:
			m.startLocked(h)
			if h.run != nil {
				continue
			}
			if h.orphaned.IsZero() {
				h.orphaned = now
			} else if now.Sub(h.orphaned) >= dropGrace {
				h.dropping = true
				drop = append(drop, h)
			}
		}
	}
	m.enforceCapsLocked()
	m.mu.Unlock()
	for _, h := range drop {
		m.drop(ctx, h)
	}
}

// pruneOwnersLocked removes h's owners no longer on the node. m.mu must
// be held.
func (m *Namespaced) pruneOwnersLocked(ctx context.Context, h *nsHolding) {
	gone := false
	for uid, p := range h.owners {
		if !m.cfg.PodPresent(p.Namespace, p.Name, uid) {
			delete(h.owners, uid)
			gone = true
		}
	}
	if gone {
		if err := m.saveLocked(ctx, h); err != nil {
			m.log.Warn("owners of a holding not stored", "resource", h.res.Key(), "err", err)
		}
	}
}

// drop stops h's sync, deletes its rows, owners and cache state, scrubs
// the write-ahead log, and forgets h. h.dropping is set.
func (m *Namespaced) drop(ctx context.Context, h *nsHolding) {
	m.mu.Lock()
	w := h.last
	m.mu.Unlock()
	if w != nil {
		<-w.done
	}
	err := dropStored(ctx, m.cfg.Store, m.cfg.Clock, h.res.Key(), nsOwnersKey(h.res.Key()), h.cache)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		h.dropping = false // the next reconcile drops it again
		m.log.Error("dropping a namespaced holding failed", "resource", h.res.Key(), "err", err)
		return
	}
	delete(m.byKey, nsKey{h.res.GVR, h.res.Namespace})
	h.cache.Close()
	m.log.Info("dropped a namespaced holding", "resource", h.res.Key())
}
