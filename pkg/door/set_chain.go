package door

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"

	"k8s.io/client-go/rest"
)

// chainParts are what every authenticated door shares: the review
// clients, the budgets they are spent within, and the forwarder.
type chainParts struct {
	reviews ReviewClients
	budget  *ReviewBudget
	fwd     *Forwarder
}

func newChainParts(cloud *rest.Config) (chainParts, error) {
	reviews, err := NewReviewClients(cloud)
	if err != nil {
		return chainParts{}, err
	}
	fwd, err := NewForwarder(cloud)
	if err != nil {
		return chainParts{}, err
	}
	return chainParts{reviews: reviews, budget: NewReviewBudget(nil), fwd: fwd}, nil
}

// newChain wires authentication, authorization and forwarding against
// the cloud, shared by the kubelet's and the pods' doors (one cache of
// reviews and decisions).
func newChain(c SetConfig, p chainParts) SecureConfig {
	return SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{NodeName: c.NodeName,
			Reviews: p.reviews.Tokens, Store: c.Decisions, Pods: c.Pods, Budget: p.budget,
			Connected: c.Connected, OfflineGrace: c.OfflineGrace, Local: c.Local, Logger: c.Logger}),
		Authorizer: NewAuthorizer(AuthorizerConfig{Reviews: p.reviews.Access, Budget: p.budget,
			Store: c.Decisions, Connected: c.Connected, OfflineGrace: c.OfflineGrace,
			Held: c.Held, Logger: c.Logger}),
		Forwarder:       p.fwd,
		ClusterScope:    c.ClusterScope,
		ImpersonateNode: c.ImpersonateNode,
		Holdings:        c.Holdings,
	}
}

// openPoolDoor opens the pool door at c.PoolAddress (docs/pool.md): its
// own kubelet-serving certificate for that address, the doors' chain
// with reviews for the pool audience and no stored answers, never a
// forward, and only the pool-wide resources held, while this member leads.
func (s *Set) openPoolDoor(c SetConfig, base *tls.Config, p chainParts) error {
	if c.PoolAddress == "" {
		return nil
	}
	host, _, _ := net.SplitHostPort(c.PoolAddress) // validated
	cert, err := NewBootstrapServing(BootstrapOptions{Cloud: c.Cloud, NodeName: c.NodeName,
		IPs: []net.IP{net.ParseIP(host)}, DataDir: c.TLS.DataDir, KeySealer: c.KeySealer,
		Lifetime: c.BootstrapLifetime, PoolDoor: true, Logger: c.Logger})
	if err != nil {
		return fmt.Errorf("pool door: %w", err)
	}
	s.poolCert = cert
	cert.Start()
	lim := NewLimiter(c.Limits, LimiterConfig{Logger: c.Logger}) // no node lane: every caller is a peer
	sc := SecureConfig{
		// No node name: no caller is this node; no store: nothing a peer
		// presents is kept; the cloud checks a token's bound pod, which
		// this node does not hold, at each review.
		Authenticator: NewAuthenticator(AuthenticatorConfig{Reviews: p.reviews.Tokens,
			Audiences: []string{c.PoolAudience}, Pods: reviewedByCloud, Budget: p.budget,
			Connected: c.Connected, OfflineGrace: c.OfflineGrace, Logger: c.Logger}),
		Authorizer: NewAuthorizer(AuthorizerConfig{Reviews: p.reviews.Access, Budget: p.budget,
			Connected: c.Connected, OfflineGrace: c.OfflineGrace, Logger: c.Logger}),
		Forwarder: p.fwd, Limiter: lim, NeverForward: true,
	}
	h := Pool(Secure(c.Handler(NamePool), sc), c.Pool)
	return s.listen(c.PoolAddress, cert.ServerTLS(base), h, lim, c.Logger, NamePool)
}

// reviewedByCloud accepts a reviewed token's bound pod: a peer's pods are
// not this node's, and the cloud checked the pod when it reviewed the
// token (again after every review's cache time).
func reviewedByCloud(string, string, string) bool { return true }

// WithoutCompression serves h as if no client accepted gzip: on the
// loopback doors compressing a body only costs CPU on both ends (kube-
// apiserver's gzip is for networks), so bodies go out as they are cached.
// The pods' door compresses large bodies for clients that ask, as kube does.
func WithoutCompression(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		h.ServeHTTP(w, r)
	})
}
