package main

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
)

// doorPool labels the pool door's requests in the metrics.
const doorPool = "pool"

// openPoolDoor opens the pool door at pool-listen-address (docs/pool.md):
// its own kubelet-serving certificate for that address, the doors' chain
// with reviews for the pool audience and no stored answers, never a
// forward, and only the pool-wide resources held, while this member leads.
func openPoolDoor(cfg config, d doorDeps, set *doorSet, base *tls.Config, p chainParts) error {
	if cfg.Pool == "" {
		return nil
	}
	host, _, _ := net.SplitHostPort(cfg.PoolListenAddress) // validated
	cert, err := door.NewBootstrapServing(door.BootstrapOptions{Cloud: d.cloud, NodeName: cfg.NodeName,
		IPs: []net.IP{net.ParseIP(host)}, DataDir: cfg.DataDir, KeySealer: d.keySealer,
		Lifetime: cfg.TLSBootstrapLifetime, PoolDoor: true, Logger: d.log})
	if err != nil {
		return fmt.Errorf("pool door: %w", err)
	}
	set.poolCert = cert
	cert.Start()
	lim := door.NewLimiter(cfg.limits(), door.LimiterConfig{Logger: d.log}) // no node lane: every caller is a peer
	sc := door.SecureConfig{
		// No node name: no caller is this node; no store: nothing a peer
		// presents is kept; the cloud checks a token's bound pod, which
		// this node does not hold, at each review.
		Authenticator: door.NewAuthenticator(door.AuthenticatorConfig{Reviews: p.reviews.Tokens,
			Audiences: []string{cfg.PoolAudience}, Pods: reviewedByCloud, Budget: p.budget,
			Connected: d.link.Connected, OfflineGrace: cfg.OfflineAuthzGrace, Logger: d.log}),
		Authorizer: door.NewAuthorizer(door.AuthorizerConfig{Reviews: p.reviews.Access, Budget: p.budget,
			Connected: d.link.Connected, OfflineGrace: cfg.OfflineAuthzGrace, Logger: d.log}),
		Forwarder: p.fwd, Limiter: lim, NeverForward: true,
	}
	h := door.Pool(door.Secure(d.handler(doorPool), sc), d.pool)
	return set.listen(cfg.PoolListenAddress, cert.ServerTLS(base), h, lim, d.log, doorPool)
}

// reviewedByCloud accepts a reviewed token's bound pod: a peer's pods are
// not this node's, and the cloud checked the pod when it reviewed the
// token (again after every review's cache time).
func reviewedByCloud(string, string, string) bool { return true }

// poolDoorConfig is what the pool door serves (holding.PoolWide) and when
// (while e says this member leads).
func poolDoorConfig(w *wiring) door.PoolConfig {
	e := w.elect
	if e == nil {
		return door.PoolConfig{}
	}
	return door.PoolConfig{Serves: holding.PoolWide(w.res, currentOf(w.held)),
		Leading: func() (bool, <-chan struct{}) { return electorLeads(e) }}
}

// electorLeads reports whether e leads, and a channel closed at the next
// change of leader.
func electorLeads(e *pool.Elector) (bool, <-chan struct{}) {
	_, _, self, changed := e.Leader()
	return self, changed
}

// stopCerts stops the doors' certificate rotations.
func (s *doorSet) stopCerts() {
	s.pods.stop()
	if s.poolCert != nil {
		s.poolCert.Stop()
	}
}
