package pool

import (
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
	Mint   Minter
	Stats  *Stats
	Clock  clock.PassiveClock
	Logger *slog.Logger
}

// Follower builds the upstreams of a member's pool-wide resources.
type Follower struct {
	cfg FollowerConfig

	mu sync.Mutex
	// transports are the connections to each leader seen. Guarded by mu.
	transports map[Holder]*http.Transport
	// tokens are the pool-audience tokens of each owner pod, by UID.
	// Guarded by mu.
	tokens map[string]transport.ResettableTokenSource
}

// NewFollower returns cfg's Follower.
func NewFollower(cfg FollowerConfig) *Follower {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Follower{cfg: cfg, transports: map[Holder]*http.Transport{}, tokens: map[string]transport.ResettableTokenSource{}}
}

// ForPods is the upstream of r, held for this node's pods: the leader's
// pool door on a pool-audience token bound to the owner pod the sync runs
// as now (identity), else the cloud's.
func (f *Follower) ForPods(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, identity func() (Pod, bool)) cache.ListerWatcherWithContext {
	return NewUpstream(UpstreamConfig{Resource: r.Key(), Cloud: cloud, Stats: f.cfg.Stats, Clock: f.cfg.Clock, Logger: f.cfg.Logger,
		Leader: func() (Source, <-chan struct{}, bool) {
			h, ok, self, changed := f.cfg.Elector.Leader()
			if !ok || self {
				return Source{}, changed, false
			}
			pod, ok := identity()
			if !ok {
				return Source{}, changed, false
			}
			src, err := f.source(r, h, pod)
			if err != nil {
				f.cfg.Logger.Warn("cannot read the pool's leader; reading the cloud", "resource", r.Key(), "leader", h.Node, "err", err)
				return Source{}, changed, false
			}
			return src, changed, true
		}})
}

// source is r at leader h's pool door, on pod's pool-audience token.
func (f *Follower) source(r cloudsync.Resource, h Holder, pod Pod) (Source, error) {
	rt, tokens, err := f.connection(h, pod)
	if err != nil {
		return Source{}, err
	}
	name := "pool:" + h.Node
	cfg := LeaderConfig(h, rt)
	cfg.Wrap(f.cfg.Stats.CountBytes(r.Key(), name))
	cfg.Wrap(transport.ResettableTokenSourceWrapTransport(tokens))
	raw, err := cloudsync.NewRawClient(cfg)
	if err != nil {
		return Source{}, err
	}
	return Source{Name: name, LW: raw.ListerWatcher(r)}, nil
}

// connection is leader h's transport and pod's pool-audience tokens,
// each made once; a new leader's transport closes the old ones' idle
// connections.
func (f *Follower) connection(h Holder, pod Pod) (http.RoundTripper, transport.ResettableTokenSource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rt, ok := f.transports[h]
	if !ok {
		var err error
		if rt, err = LeaderTransport(h, f.cfg.CA); err != nil {
			return nil, nil, err
		}
		for old, t := range f.transports {
			t.CloseIdleConnections()
			delete(f.transports, old)
		}
		f.transports[h] = rt
	}
	ts, ok := f.tokens[pod.UID]
	if !ok {
		ts = Tokens(func() (Pod, bool) { return pod, true }, f.cfg.Mint, f.cfg.Clock)
		f.tokens[pod.UID] = ts
	}
	return rt, ts, nil
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
