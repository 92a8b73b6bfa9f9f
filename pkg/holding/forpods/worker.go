package forpods

import (
	"context"
	"errors"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"golang.org/x/oauth2"
	"k8s.io/client-go/transport"
)

const (
	// mintTimeout bounds one TokenRequest.
	mintTimeout = 30 * time.Second
	// renewFraction of a token's lifetime passes before it is renewed, as
	// the kubelet renews projected tokens at 80%.
	renewFraction = 0.8
)

// errNoOwner means a holding has no owner left to request a token for.
var errNoOwner = errors.New("no pod on this node holds the resource any more")

// worker is one running holding: its sync and the tokens it uses.
type worker struct {
	cancel context.CancelFunc
	done   chan struct{}
	tokens *podTokens
}

// startLocked starts h's sync unless it runs, is being dropped, has no
// owner, Run has not started, or the cap is reached (counted).
// Holdings.mu must be held.
func (m *Holdings) startLocked(h *holding) {
	if h.run != nil || h.dropping || len(h.owners) == 0 || m.runCtx == nil {
		return
	}
	if m.runningLocked() >= m.cfg.Max {
		m.stats.refuse(h.Resource.Key())
		m.log.Warn("not held for pods: too many resources held; reads stay the cloud's",
			"resource", h.Resource.Key(), "max", m.cfg.Max)
		return
	}
	if m.cfg.AtTotalBytes != nil && m.cfg.AtTotalBytes() {
		m.stats.refuse(h.Resource.Key())
		m.log.Warn("not held for pods: pod-identity-max-bytes are held already; reads stay the cloud's", "resource", h.Resource.Key())
		return
	}
	ctx, cancel := context.WithCancel(m.runCtx)
	tokens := &podTokens{m: m, h: h}
	w := &worker{cancel: cancel, done: make(chan struct{}), tokens: tokens}
	prev := h.last
	h.run, h.last = w, w
	h.identity, h.identityToken = door.Pod{}, ""
	ts := &syncTokens{ResettableTokenSource: transport.NewCachedTokenSource(tokens), m: m, h: h}
	m.log.Info("holding for pods", "resource", h.Resource.Key(), "for", serviceAccountsLocked(h))
	m.wg.Go(func() {
		defer close(w.done)
		if prev != nil {
			<-prev.done // one sync of a resource at a time
		}
		if err := m.cfg.Sync(ctx, h.Held, ts); err != nil && ctx.Err() == nil {
			m.log.Error("sync of a resource held for pods stopped", "resource", h.Resource.Key(), "err", err)
		}
	})
}

// stopLocked stops h's sync, if running, without waiting for it to end.
// Holdings.mu must be held.
func stopLocked(h *holding) {
	if h.run != nil {
		h.run.cancel()
		h.run = nil
	}
}

// runningLocked counts the holdings running. Holdings.mu must be held.
func (m *Holdings) runningLocked() int {
	n := 0
	for _, h := range m.byGVR {
		if h.run != nil {
			n++
		}
	}
	return n
}

// podTokens requests the tokens of one holding, each bound to one of its
// owners (see failover.go for which). It is wrapped in client-go's caching
// token source, which asks again once a token reaches its renewal time or
// the cloud refuses it.
type podTokens struct {
	m *Holdings
	h *holding
}

// Token requests a token for the holding's sync identity, failing over to
// the next owner while the cloud refuses to mint for one.
func (t *podTokens) Token() (*oauth2.Token, error) {
	for {
		pod, ok := t.m.nextIdentity(t.h)
		if !ok {
			return nil, errNoOwner
		}
		ctx, cancel := context.WithTimeout(context.Background(), mintTimeout)
		token, expires, err := t.m.cfg.Mint(ctx, pod)
		cancel()
		if err != nil {
			if !ownerRefused(err) {
				return nil, err // the cloud's trouble, not the owner's: asked again later
			}
			t.m.dropOwner(t.h, pod, "the cloud refused to mint its token", err)
			continue
		}
		t.m.setIdentity(t.h, pod, token)
		now := t.m.cfg.Clock.Now()
		renew := now.Add(time.Duration(float64(expires.Sub(now)) * renewFraction))
		return &oauth2.Token{AccessToken: token, TokenType: "Bearer", Expiry: renew}, nil
	}
}
