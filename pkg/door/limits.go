package door

import (
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"k8s.io/utils/clock"
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
	// nodeInflightReserveDivisor reserves a quarter of the in-flight slots
	// for this node's own identity: no other identity may take them.
	nodeInflightReserveDivisor = 4
)

// Limits are the caps of one door; a zero field is no cap.
type Limits struct {
	MaxConnections          int
	MaxConnectionsPerSource int
	MaxRequestsInflight     int
	MaxWatchesPerClient     int
}

// LimiterConfig is what a Limiter needs besides its caps. NodeName names
// the node whose client certificate may use the reserve; Clock and Logger
// may be nil.
type LimiterConfig struct {
	NodeName string
	Clock    clock.WithDelayedExecution
	Logger   *slog.Logger
	// Unauthenticated, when set, is called for every request answered
	// 401 (for the metrics); it must not block.
	Unauthenticated func()
}

// Limiter enforces Limits once the caller is known, in the spirit of API
// Priority and Fairness: this node's identity has a reserved lane of
// connections and in-flight requests, every other identity a fair share
// of the rest. Before authentication only connections are counted (per
// source, see conns.go) and token reviews budgeted (see budget.go).
type Limiter struct {
	limits   Limits
	nodeName string
	clock    clock.WithDelayedExecution
	refusals *refusalLog
	// unauthenticated is LimiterConfig.Unauthenticated, never nil.
	// Immutable.
	unauthenticated func()
	// handshakes holds a token per TLS handshake in progress.
	handshakes chan struct{}

	mu            sync.Mutex
	connsGeneral  int            // guarded by mu; open connections in the general pool
	connsReserved int            // guarded by mu; open connections in the node's reserve
	connSources   map[string]int // guarded by mu; open connections per remote IP
	inflight      int            // guarded by mu; short requests in flight, the node's included
	inflightOther int            // guarded by mu; short requests in flight of other identities
	watches       map[string]int // guarded by mu; open long-running requests per identity
	shares        map[string]int // guarded by mu; short requests in flight per other identity
}

// NewLimiter returns a Limiter for l.
func NewLimiter(l Limits, cfg LimiterConfig) *Limiter {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Unauthenticated == nil {
		cfg.Unauthenticated = func() {}
	}
	return &Limiter{limits: l, nodeName: cfg.NodeName, clock: cfg.Clock, unauthenticated: cfg.Unauthenticated,
		refusals: newRefusalLog(cfg.Clock, cfg.Logger), handshakes: make(chan struct{}, handshakeSlots()),
		watches: map[string]int{}, shares: map[string]int{}, connSources: map[string]int{}}
}

// Listener counts the door's connections: beyond the general pool or the
// source's cap a connection is kept only as the node's (see conns.go);
// beyond the reserve it is closed at once. tlsDoor is true when ln's
// connections are then served with TLSConfig's configuration.
func (l *Limiter) Listener(ln net.Listener, tlsDoor bool) net.Listener {
	return &connListener{Listener: ln, lim: l, tls: tlsDoor}
}

// inflightReserve is how many in-flight slots only the node may use.
func (l *Limiter) inflightReserve() int {
	return l.limits.MaxRequestsInflight / nodeInflightReserveDivisor
}

// admitInflight takes an in-flight slot for a short request of identity,
// or answers 429. The node may use every slot; any other identity only
// the general ones, within its fair share of them.
func (l *Limiter) admitInflight(w http.ResponseWriter, identity string, node bool) (release func(), ok bool) {
	if l.limits.MaxRequestsInflight <= 0 {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if node {
		if l.inflight >= l.limits.MaxRequestsInflight {
			tooMany(w, "too many requests in flight, please try again later", retryAfterSeconds)
			return nil, false
		}
		l.inflight++
		return l.releaser(func() { l.inflight-- }), true
	}
	general := l.limits.MaxRequestsInflight - l.inflightReserve()
	switch {
	case l.inflightOther >= general || l.inflight >= l.limits.MaxRequestsInflight:
		tooMany(w, "too many requests in flight, please try again later", retryAfterSeconds)
		return nil, false
	case l.shares[identity] >= fairShare(general, l.shares, identity):
		tooMany(w, "too many requests in flight for this client, please try again later", retryAfterSeconds)
		return nil, false
	}
	l.inflight++
	l.inflightOther++
	l.shares[identity]++
	return l.releaser(func() {
		l.inflight--
		l.inflightOther--
		if l.shares[identity]--; l.shares[identity] <= 0 {
			delete(l.shares, identity)
		}
	}), true
}

// releaser runs undo under mu, once.
func (l *Limiter) releaser(undo func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			undo()
		})
	}
}

// fairShare is key's share of slots among the identities in counts, at
// most half of them.
func fairShare(slots int, counts map[string]int, key string) int {
	n := len(counts)
	if _, ok := counts[key]; !ok {
		n++
	}
	return max(1, slots/max(n, minShareDivisor))
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
	return l.releaser(func() {
		if l.watches[identity]--; l.watches[identity] <= 0 {
			delete(l.watches, identity)
		}
	}), true
}

// admitIdentity applies the per-identity caps once the caller is known: a
// long-running request (classified only now, see requestinfo.LongRunning)
// counts against identity's watch cap, a short one against its lane of
// the in-flight slots.
func (l *Limiter) admitIdentity(w http.ResponseWriter, a attributes, identity string, node bool) (func(), bool) {
	if requestinfo.LongRunning(a) {
		return l.admitWatch(w, identity)
	}
	return l.admitInflight(w, identity, node)
}
