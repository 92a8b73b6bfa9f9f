package link

import (
	"math/rand/v2"
	"time"
)

// retryAfterMemory is how long a Retry-After the prober got stays the
// floor of the relist window: about one outage's return, after which the
// cloud's load is its steady one again.
const retryAfterMemory = time.Minute

// RelistDelay is a random delay in [0, w) that a watch resuming after the
// link came back, or a relist after a 410, waits first: w is the
// configured RelistSpread, or the Retry-After the cloud last asked of the
// prober (within retryAfterMemory) when that is longer. A node cannot
// count the fleet; the operator's window and the cloud's own answer can.
func (l *Link) RelistDelay() time.Duration {
	w := l.cfg.RelistSpread
	l.mu.Lock()
	if !l.retryAfterAt.IsZero() && l.cfg.Clock.Since(l.retryAfterAt) < retryAfterMemory {
		w = max(w, l.retryAfter)
	}
	l.mu.Unlock()
	return rand.N(w)
}

// noteRetryAfter records a Retry-After the cloud answered a probe with.
func (l *Link) noteRetryAfter(d time.Duration) {
	if d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retryAfter, l.retryAfterAt = d, l.cfg.Clock.Now()
}
