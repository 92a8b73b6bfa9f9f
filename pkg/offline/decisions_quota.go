package offline

import (
	"context"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

const (
	// staleDecisionAge is how long a stored decision may go unrefreshed
	// before it may make room for a new one of its identity: a client
	// still asking re-asks the cloud at least every allowedTTL (5 min)
	// while it re-watches, so an hour means its token or its question is
	// gone.
	staleDecisionAge = time.Hour
	// evictInterval spaces the evictions of one identity's stale
	// decisions: each scans its rows in a write transaction, and a full
	// quota of fresh rows makes room for nothing anyway.
	evictInterval = time.Minute
)

// withinQuota reports whether key may be stored for u at now: it is
// stored already (a refresh), or u has fewer than its quota, if need be
// after its stale decisions made room. A failure to count refuses: the
// decision stays in memory.
func (z *Decisions) withinQuota(ctx context.Context, u caller.User, key string, now time.Time) bool {
	if _, ok, err := z.cfg.Store.Get(ctx, DecisionPrefix+key); err == nil && ok {
		return true
	}
	prefix := DecisionPrefix + identityKey(u) + "/"
	use, err := z.cfg.Store.MetaUsage(ctx, prefix)
	if err == nil && use.Count < z.cfg.PerIdentity {
		return true
	}
	if err != nil || !z.mayEvict(prefix, now) {
		return false
	}
	n, err := z.cfg.Store.PruneMeta(ctx, prefix, func(raw []byte) bool {
		d, ok := z.decode(raw)
		return !ok || now.Sub(d.At) > staleDecisionAge
	})
	return err == nil && use.Count-n < z.cfg.PerIdentity
}

// mayEvict reports whether the identity at prefix may evict now, and
// records that it does.
func (z *Decisions) mayEvict(prefix string, now time.Time) bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	if at, ok := z.evicted[prefix]; ok && now.Sub(at) < evictInterval {
		return false
	}
	if len(z.evicted) >= maxMemDecisions {
		clear(z.evicted)
	}
	z.evicted[prefix] = now
	return true
}
