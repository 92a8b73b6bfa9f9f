package door

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"golang.org/x/net/netutil"
)

// Defaults of the limits at each door.
const (
	// DefaultMaxConnections caps open connections per door; an edge node
	// has a kubelet, a few dozen pods and kubectl.
	DefaultMaxConnections = 1024
	// DefaultMaxRequestsInflight caps short (not long-running) requests
	// being served per door, kube-apiserver's --max-requests-inflight
	// default.
	DefaultMaxRequestsInflight = 400
	// DefaultMaxWatchesPerClient caps watches per client identity; the
	// kubelet watches each referenced secret and configmap on its own.
	DefaultMaxWatchesPerClient = 1000
	// retryAfterSeconds is the Retry-After of a 429.
	retryAfterSeconds = 1
	// minShareDivisor caps one identity at half the in-flight slots even
	// when it is alone, so a caller that arrives later always finds room.
	minShareDivisor = 2
)

// Limits are the caps of one door; a zero field is no cap.
type Limits struct {
	MaxConnections      int
	MaxRequestsInflight int
	MaxWatchesPerClient int
}

// Limiter enforces Limits. ConnState must be set as the http.Server's
// ConnState so that connections are counted.
type Limiter struct {
	limits   Limits
	conns    atomic.Int64
	inflight chan struct{} // nil without a cap
	mu       sync.Mutex
	watches  map[string]int // guarded by mu; open long-running requests per identity
	shares   map[string]int // guarded by mu; short requests in flight per identity
	sources  map[string]int // guarded by mu; short requests in flight per remote address, before authentication
}

// NewLimiter returns a Limiter for l.
func NewLimiter(l Limits) *Limiter {
	lim := &Limiter{limits: l, watches: map[string]int{}, shares: map[string]int{}, sources: map[string]int{}}
	if l.MaxRequestsInflight > 0 {
		lim.inflight = make(chan struct{}, l.MaxRequestsInflight)
	}
	return lim
}

// ConnState counts open connections (http.Server.ConnState).
func (l *Limiter) ConnState(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		l.conns.Add(1)
	case http.StateClosed, http.StateHijacked:
		l.conns.Add(-1)
	}
}

// admitConnection answers 429 and closes the connection when too many are
// open.
func (l *Limiter) admitConnection(w http.ResponseWriter) bool {
	if l.limits.MaxConnections <= 0 || l.conns.Load() <= int64(l.limits.MaxConnections) {
		return true
	}
	w.Header().Set("Connection", "close")
	tooMany(w, "too many open connections, please try again later", retryAfterSeconds)
	return false
}

// admitRequest takes an in-flight slot for a short request, or answers
// 429. It runs before authentication, so that unauthenticated work is
// bounded too. The returned release must be called when the request is
// done.
func (l *Limiter) admitRequest(w http.ResponseWriter) (release func(), ok bool) {
	if l.inflight == nil {
		return func() {}, true
	}
	select {
	case l.inflight <- struct{}{}:
		return func() { <-l.inflight }, true
	default:
		tooMany(w, "too many requests in flight, please try again later", retryAfterSeconds)
		return nil, false
	}
}

// admitShare counts a short request of identity within its fair share of
// the in-flight slots (the cap divided among the identities holding slots,
// at most half of it), in the spirit of API Priority and Fairness: one
// caller cannot starve the others. An empty identity (the insecure door,
// where every caller is the node) has no share to keep.
func (l *Limiter) admitShare(w http.ResponseWriter, identity string) (release func(), ok bool) {
	return l.admitFair(w, l.shares, identity, "too many requests in flight for this client, please try again later")
}

// admitSource applies the fair share to a request's remote address before
// it is authenticated, so unauthenticated work from one pod cannot crowd
// out the others. Loopback sources are exempt: every local process,
// the kubelet included, shares them.
func (l *Limiter) admitSource(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	if err != nil || ip == nil || ip.IsLoopback() {
		return func() {}, true
	}
	return l.admitFair(w, l.sources, ip.String(), "too many requests in flight from this address, please try again later")
}

// admitFair counts key in counts within its fair share of the in-flight
// slots, or answers 429 with msg.
func (l *Limiter) admitFair(w http.ResponseWriter, counts map[string]int, key, msg string) (release func(), ok bool) {
	if l.limits.MaxRequestsInflight <= 0 || key == "" {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if counts[key] >= l.shareLocked(counts, key) {
		tooMany(w, msg, retryAfterSeconds)
		return nil, false
	}
	counts[key]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if counts[key]--; counts[key] <= 0 {
			delete(counts, key)
		}
	}, true
}

// shareLocked is key's fair share of the in-flight slots among counts.
func (l *Limiter) shareLocked(counts map[string]int, key string) int {
	n := len(counts)
	if _, ok := counts[key]; !ok {
		n++
	}
	return max(1, l.limits.MaxRequestsInflight/max(n, minShareDivisor))
}

// admitWatch counts a long-running request of identity, or answers 429.
func (l *Limiter) admitWatch(w http.ResponseWriter, identity string) (release func(), ok bool) {
	if l.limits.MaxWatchesPerClient <= 0 {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watches[identity] >= l.limits.MaxWatchesPerClient {
		tooMany(w, "too many watches for this client, please try again later", retryAfterSeconds)
		return nil, false
	}
	l.watches[identity]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.watches[identity]--; l.watches[identity] <= 0 {
			delete(l.watches, identity)
		}
	}, true
}

// admitPreAuth applies the connection cap and, to a short request, the
// door's in-flight cap and its source's share of it, before anything is
// spent on authentication. Long-running requests (see
// requestinfo.LongRunning) are exempt from the in-flight cap, as in
// kube-apiserver.
func (l *Limiter) admitPreAuth(w http.ResponseWriter, r *http.Request, a attributes) (func(), bool) {
	if !l.admitConnection(w) {
		return nil, false
	}
	if requestinfo.LongRunning(a) {
		return func() {}, true
	}
	fromSource, ok := l.admitSource(w, r)
	if !ok {
		return nil, false
	}
	slot, ok := l.admitRequest(w)
	if !ok {
		fromSource()
		return nil, false
	}
	return func() { slot(); fromSource() }, true
}

// admitIdentity applies the per-identity caps once the caller is known: a
// long-running request counts against identity's watch cap, a short one
// against its fair share of the in-flight slots.
func (l *Limiter) admitIdentity(w http.ResponseWriter, a attributes, identity string) (func(), bool) {
	if requestinfo.LongRunning(a) {
		return l.admitWatch(w, identity)
	}
	return l.admitShare(w, identity)
}

// connectionHeadroom is how many connections past MaxConnections are still
// accepted, to be answered 429; beyond it, accepting waits.
const connectionHeadroom = 64

// Listener caps accepted connections at MaxConnections plus a headroom
// in which the excess is answered 429.
func (l *Limiter) Listener(ln net.Listener) net.Listener {
	if l.limits.MaxConnections <= 0 {
		return ln
	}
	return netutil.LimitListener(ln, l.limits.MaxConnections+connectionHeadroom)
}
