package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/rest"
)

const (
	// idleTimeout closes keep-alive connections idle this long.
	idleTimeout = 90 * time.Second
	// maxHeaderBytes bounds the request line and headers (bytes),
	// kube-apiserver's limit: a LIST with a long label selector fits.
	maxHeaderBytes = 1 << 20
)

// doorSocket names each door's socket as systemd passes it.
var doorSocket = map[string]string{doorLoopback: door.SocketKubelet, doorTLS: door.SocketPods, doorInsecure: door.SocketInsecure}

// doorSockets are the doors' addresses by socket name ("" for a door
// that is off).
func (c config) doorSockets() map[string]string {
	return map[string]string{door.SocketKubelet: c.ListenAddress, door.SocketPods: c.SecureListenAddress,
		door.SocketInsecure: c.InsecureListenAddress}
}

// doorSet is the local API's open doors, each a server on its listener.
type doorSet struct {
	servers   []*http.Server
	listeners []net.Listener
	// drains count what is busy on each server, so shutdown closes its
	// connections once nothing is (see door.Drain).
	drains []*door.Drain
	// probe is where the watchdog asks /livez: the first door opened, or
	// nil when none is.
	probe *selfDoor
	// pods is the pods' door's bootstrapped certificate and binding state
	// (see doors_pods.go).
	pods podsDoor
	// sockets hands each door its listener (see door.Sockets).
	sockets *door.Sockets
	// poolCert is the pool door's bootstrapped certificate; nil without
	// a pool.
	poolCert *door.BootstrapServing
}

// selfDoor is a door the daemon can reach itself.
type selfDoor struct {
	addr net.Addr
	tls  bool
}

// doorDeps are what the doors wrap and consult.
type doorDeps struct {
	// handler serves a door's requests: the local API behind the daemon's
	// own endpoints (/metrics, /debug/pprof/, health), which are never
	// forwarded, labelled by door in the metrics.
	handler func(door string) http.Handler
	// authFailed returns what counts a door's 401s in the metrics.
	authFailed func(door string) func()
	cloud      *rest.Config
	caches     []*versioncache.Cache
	// res are the resources the daemon holds: only decisions on them are
	// stored.
	res []cloudsync.Resource
	// alsoHeld reports the reads of what is held beyond res (in a
	// namespace for its pods): their decisions are stored too.
	alsoHeld func(requestinfo.Attributes) bool
	store    *metastore.Store
	link     *link.Link
	log      *slog.Logger
	// clusterScope authorizes this node's identity per request too.
	clusterScope bool
	// keySealer keeps a generated TLS key sealed on disk; nil without a
	// state key.
	keySealer door.KeySealer
	// holdings hold resources for the node's pods; nil holds none.
	holdings door.Holdings
	// local verifies the node's pods' service-account tokens; nil
	// reviews every token.
	local door.LocalVerifier
	// sockets are where the doors listen: the sockets systemd passed,
	// else each door's own.
	sockets *door.Sockets
	// pool is what the pool door serves and when; unused without a pool.
	pool door.PoolConfig
}

// openDoors listens on the configured doors; on error it closes what it
// opened. The kubelet's door (listen-address) and the pods' door
// (secure-listen-address) share one authentication and authorization
// chain; the insecure door makes every caller the node.
func openDoors(cfg config, d doorDeps) (*doorSet, error) {
	set := &doorSet{sockets: d.sockets}
	if err := openAuthenticated(cfg, d, set); err != nil {
		return nil, errors.Join(err, set.close())
	}
	if cfg.InsecureListenAddress != "" {
		lim := door.NewLimiter(cfg.limits(), door.LimiterConfig{NodeName: cfg.NodeName, Logger: d.log,
			Unauthenticated: d.authFailed(doorInsecure)})
		ops := d.handler(doorInsecure)
		h := door.Insecure(withoutCompression(ops), door.InsecureConfig{Limiter: lim, Operations: ops})
		if err := set.listen(cfg.InsecureListenAddress, nil, h, lim, d.log, doorInsecure); err != nil {
			return nil, errors.Join(err, set.close())
		}
	}
	return set, nil
}

// openAuthenticated opens the TLS doors that are configured.
func openAuthenticated(cfg config, d doorDeps, set *doorSet) error {
	doors := []struct{ addr, name string }{{cfg.ListenAddress, doorLoopback}, {cfg.SecureListenAddress, doorTLS}}
	if cfg.ListenAddress == "" && cfg.SecureListenAddress == "" && cfg.Pool == "" {
		return nil
	}
	tlsCfg, err := doorsTLS(cfg, d.cloud, d.keySealer, d.log)
	if err != nil {
		return err
	}
	parts, err := newChainParts(d)
	if err != nil {
		return err
	}
	chain := newChain(cfg, d, parts)
	podsTLS, err := set.pods.open(cfg, d, tlsCfg)
	if err != nil {
		return err
	}
	for _, spec := range doors {
		if spec.addr == "" {
			continue
		}
		serveTLS := tlsCfg
		if spec.name == doorTLS {
			serveTLS = podsTLS
		}
		if err := openDoor(cfg, d, set, chain, spec.addr, spec.name, serveTLS); err != nil {
			return err
		}
	}
	return openPoolDoor(cfg, d, set, tlsCfg, parts)
}

// openDoor opens the authenticated door name at addr with its own limits
// (the pods' door waits for its address while it is not bound).
func openDoor(cfg config, d doorDeps, set *doorSet, chain door.SecureConfig, addr, name string, serveTLS *tls.Config) error {
	sc := chain
	sc.Limiter = door.NewLimiter(cfg.limits(), door.LimiterConfig{NodeName: cfg.NodeName, Logger: d.log,
		Unauthenticated: d.authFailed(name)})
	sc.Operations = d.handler(name)
	h := sc.Operations
	if name == doorLoopback {
		h = withoutCompression(h)
	}
	if name == doorTLS && set.pods.unbound() {
		set.pending(addr, serveTLS, door.Secure(h, sc), sc.Limiter, d.log)
		return nil
	}
	return set.listen(addr, serveTLS, door.Secure(h, sc), sc.Limiter, d.log, name)
}

// withoutCompression serves h as if no client accepted gzip: on the
// loopback doors compressing a body only costs CPU on both ends (kube-
// apiserver's gzip is for networks), so bodies go out as they are cached.
// The pods' door compresses large bodies for clients that ask, as kube does.
func withoutCompression(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		h.ServeHTTP(w, r)
	})
}

// chainParts are what every authenticated door shares: the review
// clients, the budgets they are spent within, and the forwarder.
type chainParts struct {
	reviews door.ReviewClients
	budget  *door.ReviewBudget
	fwd     *door.Forwarder
}

func newChainParts(d doorDeps) (chainParts, error) {
	reviews, err := door.NewReviewClients(d.cloud)
	if err != nil {
		return chainParts{}, err
	}
	fwd, err := door.NewForwarder(d.cloud)
	if err != nil {
		return chainParts{}, err
	}
	return chainParts{reviews: reviews, budget: door.NewReviewBudget(nil), fwd: fwd}, nil
}

// newChain wires authentication, authorization and forwarding against
// the cloud, shared by the TLS doors (one cache of reviews and decisions).
func newChain(cfg config, d doorDeps, p chainParts) door.SecureConfig {
	decisions := offline.MetaStore{Store: d.store}
	return door.SecureConfig{
		Authenticator: door.NewAuthenticator(door.AuthenticatorConfig{NodeName: cfg.NodeName,
			Reviews: p.reviews.Tokens, Store: decisions, Pods: holding.HeldPod(d.caches), Budget: p.budget,
			Connected: d.link.Connected, OfflineGrace: cfg.OfflineAuthzGrace, Local: d.local, Logger: d.log}),
		Authorizer: door.NewAuthorizer(door.AuthorizerConfig{Reviews: p.reviews.Access, Budget: p.budget,
			Store: decisions, Connected: d.link.Connected, OfflineGrace: cfg.OfflineAuthzGrace,
			Held: heldOrAlso(offline.HeldResources(d.res), d.alsoHeld), Logger: d.log}),
		Forwarder:       p.fwd,
		ClusterScope:    d.clusterScope,
		ImpersonateNode: d.clusterScope && cfg.ClusterScopeNodeWrites == nodeWritesAsNode,
		Holdings:        d.holdings,
	}
}

// listen serves h on addr within lim, with TLS when tlsCfg is set.
func (s *doorSet) listen(addr string, tlsCfg *tls.Config, h http.Handler, lim *door.Limiter, log *slog.Logger, name string) error {
	passed := s.sockets.Passed(doorSocket[name])
	ln, err := s.sockets.Listen(doorSocket[name], addr)
	if err != nil {
		return fmt.Errorf("listen %s door: %w", name, err)
	}
	if s.probe == nil {
		s.probe = &selfDoor{addr: ln.Addr(), tls: tlsCfg != nil}
	}
	srv := s.newDoorServer(h, lim, log)
	ln = lim.Listener(ln, tlsCfg != nil)
	if tlsCfg != nil {
		srv.TLSConfig = lim.TLSConfig(tlsCfg)
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	s.servers, s.listeners = append(s.servers, srv), append(s.listeners, ln)
	log.Info("serving", "door", name, "address", ln.Addr().String(), "tls", tlsCfg != nil, "systemdSocket", passed)
	return nil
}

// newDoorServer is the HTTP server of one door, with its drain added to
// s.drains; the caller adds the server to s.servers.
func (s *doorSet) newDoorServer(h http.Handler, lim *door.Limiter, log *slog.Logger) *http.Server {
	drain := door.NewDrain(nil)
	s.drains = append(s.drains, drain)
	connState := func(c net.Conn, st http.ConnState) {
		drain.ConnState(c, st)
		lim.ConnState(c, st)
	}
	return &http.Server{Handler: drain.Handler(h), ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		MaxHeaderBytes: maxHeaderBytes, ConnState: connState, ConnContext: lim.ConnContext,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)} // failed handshakes are the client's to see
}

// serve runs every door; each one's end is sent on errs. A door whose
// address is not bound yet is served once it is.
func (s *doorSet) serve(wg *sync.WaitGroup, errs chan<- error) {
	for i, srv := range s.servers {
		ln := s.listeners[i]
		if ln == nil {
			wg.Go(func() { errs <- s.pods.serveWhenBound(srv) })
			continue
		}
		wg.Go(func() { errs <- srv.Serve(ln) })
	}
}

// shutdown stops every door gracefully, all at once: each closes its
// connections once no request is in flight on it (door.Drain), not a
// second later as net/http's HTTP/2 GOAWAY would.
func (s *doorSet) shutdown(ctx context.Context) error {
	s.stopCerts()
	errs := make([]error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = s.drains[i].Shutdown(ctx, srv) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *doorSet) close() error {
	s.stopCerts()
	var errs []error
	for i, srv := range s.servers {
		errs = append(errs, srv.Close())
		if ln := s.listeners[i]; ln != nil {
			errs = append(errs, ignoreClosed(ln.Close()))
		}
	}
	return errors.Join(errs...)
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// heldOrAlso reports a read as held when held or also (if set) does.
func heldOrAlso(held, also func(requestinfo.Attributes) bool) func(requestinfo.Attributes) bool {
	if also == nil {
		return held
	}
	return func(a requestinfo.Attributes) bool { return held(a) || also(a) }
}
