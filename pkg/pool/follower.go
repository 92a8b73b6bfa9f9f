package pool

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
)

// FollowerConfig is how a member reads pool-wide resources from its
// pool's leader.
type FollowerConfig struct {
	Elector *Elector
	// CA verifies the leader's pool door (the cluster CA, which signs
	// kubelet-serving certificates).
	CA []byte
	// Mint requests a token for the pool audience, bound to one of this
	// node's pods: what the follower presents at the leader.
	Mint Minter
	// NodeTLS holds the node's client certificate: the follower's
	// identity at the leader for what it syncs on node credentials.
	NodeTLS *tls.Config
	Stats   *Stats
	Clock   clock.Clock
	Logger  *slog.Logger
}

// Follower builds the upstreams of a member's pool-wide resources.
type Follower struct {
	cfg FollowerConfig

	mu sync.Mutex
	// transports are the connections to each leader seen, with a node
	// certificate or not. Guarded by mu.
	transports map[transportKey]*http.Transport
	// tokens are the pool-audience tokens of each owner pod, by UID.
	// Guarded by mu.
	tokens map[string]transport.ResettableTokenSource
}

// NewFollower returns cfg's Follower.
func NewFollower(cfg FollowerConfig) *Follower {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Follower{cfg: cfg, transports: map[transportKey]*http.Transport{}, tokens: map[string]transport.ResettableTokenSource{}}
}

// transportKey is one connection to a leader: as the node (its
// certificate) or for tokens.
type transportKey struct {
	leader Holder
	asNode bool
}

// Node is the upstream of r, synced on the node's credentials: the
// leader's pool door on the node's certificate, else the cloud's.
func (f *Follower) Node(r cloudsync.Resource, cloud cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
	return f.upstream(r, cloud, func(h Holder) (Source, error) {
		rt, err := f.transport(transportKey{leader: h, asNode: true})
		if err != nil {
			return Source{}, err
		}
		return f.sourceOver(r, h, rt)
	})
}

// ForPods is the upstream of r, held for this node's pods: the leader's
// pool door on a pool-audience token bound to the owner pod the sync runs
// as now (identity), else the cloud's.
func (f *Follower) ForPods(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, identity func() (Pod, bool)) cache.ListerWatcherWithContext {
	return f.upstream(r, cloud, func(h Holder) (Source, error) {
		pod, ok := identity()
		if !ok {
			return Source{}, errNoOwner
		}
		rt, err := f.transport(transportKey{leader: h})
		if err != nil {
			return Source{}, err
		}
		return f.sourceOver(r, h, transport.ResettableTokenSourceWrapTransport(f.tokensOf(pod))(rt))
	})
}

// errNoOwner means a holding for pods has no owner to read as yet.
var errNoOwner = errors.New("no owner pod to read as")

// upstream is r's Upstream whose leader source is at.
func (f *Follower) upstream(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, at func(Holder) (Source, error)) *Upstream {
	return NewUpstream(UpstreamConfig{Resource: r.Key(), Cloud: cloud, Stats: f.cfg.Stats, Clock: f.cfg.Clock, Logger: f.cfg.Logger,
		Leader: func() (Source, <-chan struct{}, bool) {
			h, ok, self, changed := f.cfg.Elector.Leader()
			if !ok || self {
				return Source{}, changed, false
			}
			src, err := at(h)
			if err != nil {
				f.cfg.Logger.Warn("cannot read the pool's leader; reading the cloud", "resource", r.Key(), "leader", h.Node, "err", err)
				return Source{}, changed, false
			}
			return src, changed, true
		}})
}

// sourceOver is r at leader h's pool door over rt, its bytes counted.
func (f *Follower) sourceOver(r cloudsync.Resource, h Holder, rt http.RoundTripper) (Source, error) {
	name := "pool:" + h.Node
	cfg := LeaderConfig(h, rt)
	cfg.Wrap(f.cfg.Stats.CountBytes(r.Key(), name))
	raw, err := cloudsync.NewRawClient(cfg)
	if err != nil {
		return Source{}, err
	}
	// The leader serves its stored JSON as is, and protobuf only through
	// its Go types: JSON, so a field of a newer cloud reaches the follower.
	return Source{Name: name, LW: raw.JSONWatches().ListerWatcher(r)}, nil
}

// transport is the connection k, made once; a new leader's closes the
// old ones' idle connections.
func (f *Follower) transport(k transportKey) (*http.Transport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rt, ok := f.transports[k]; ok {
		return rt, nil
	}
	var client *tls.Config
	if k.asNode {
		client = f.cfg.NodeTLS
	}
	rt, err := LeaderTransport(k.leader, f.cfg.CA, client)
	if err != nil {
		return nil, err
	}
	for old, t := range f.transports {
		if old.leader != k.leader {
			t.CloseIdleConnections()
			delete(f.transports, old)
		}
	}
	f.transports[k] = rt
	return rt, nil
}

// tokensOf are pod's pool-audience tokens, made once.
func (f *Follower) tokensOf(pod Pod) transport.ResettableTokenSource {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts, ok := f.tokens[pod.UID]
	if !ok {
		ts = Tokens(func() (Pod, bool) { return pod, true }, f.cfg.Mint, f.cfg.Clock)
		f.tokens[pod.UID] = ts
	}
	return ts
}

// CountBytes wraps a transport so the bytes of every response body read
// through it count for resource from upstream.
func (s *Stats) CountBytes(resource, upstream string) transport.WrapperFunc {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &counting{next: rt, add: func(n int64) { s.AddBytes(resource, upstream, n) }}
	}
}

// counting counts response body bytes.
type counting struct {
	next http.RoundTripper
	add  func(int64)
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &countedBody{ReadCloser: resp.Body, add: c.add}
	}
	return resp, err
}

// WrappedRoundTripper lets client-go find the transport underneath.
func (c *counting) WrappedRoundTripper() http.RoundTripper { return c.next }

type countedBody struct {
	io.ReadCloser
	add func(int64)
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.add(int64(n))
	return n, err
}
