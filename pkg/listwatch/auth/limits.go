package auth

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"golang.org/x/net/netutil"
)

// Defaults of the limits at each door.
const (
	// DefaultMaxConnections caps open connections per door; an edge node
	// has a kubelet, a few dozen pods and kubectl.
	DefaultMaxConnections = 1024
	// DefaultMaxRequestsInflight caps non-watch requests being served per
	// door, kube-apiserver's --max-requests-inflight default.
	DefaultMaxRequestsInflight = 400
	// DefaultMaxWatchesPerClient caps watches per client identity; the
	// kubelet watches each referenced secret and configmap on its own.
	DefaultMaxWatchesPerClient = 1000
	// retryAfterSeconds is the Retry-After of a 429.
	retryAfterSeconds = 1
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
	watches  map[string]int // guarded by mu; open watches per identity
}

// NewLimiter returns a Limiter for l.
func NewLimiter(l Limits) *Limiter {
	lim := &Limiter{limits: l, watches: map[string]int{}}
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

// admitRequest takes an in-flight slot for a non-watch request, or answers
// 429. The returned release must be called when the request is done.
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

// admitWatch counts a watch of identity, or answers 429.
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

// admit applies the connection cap, then the watch or in-flight cap.
func (l *Limiter) admit(w http.ResponseWriter, watch bool, identity string) (func(), bool) {
	if !l.admitConnection(w) {
		return nil, false
	}
	if watch {
		return l.admitWatch(w, identity)
	}
	return l.admitRequest(w)
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
