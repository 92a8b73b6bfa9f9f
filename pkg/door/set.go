package door

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

	"k8s.io/client-go/rest"
)

// The doors' names: the door label of the request metrics, and which
// socket systemd passes each (doorSocket).
const (
	NameLoopback = "loopback" // the kubelet's authenticated door (listen-address)
	NamePods     = "tls"      // the pods' authenticated door (secure-listen-address)
	NameInsecure = "insecure" // the plain-HTTP door (insecure-listen-address)
	NamePool     = "pool"     // the pool door (pool-listen-address)
)

const (
	// idleTimeout closes keep-alive connections idle this long.
	idleTimeout = 90 * time.Second
	// maxHeaderBytes bounds the request line and headers (bytes),
	// kube-apiserver's limit: a LIST with a long label selector fits.
	maxHeaderBytes = 1 << 20
	// readHeaderTimeout bounds how long a local client may take to send
	// its request headers.
	readHeaderTimeout = 10 * time.Second
)

// doorSocket names each door's socket as systemd passes it.
var doorSocket = map[string]string{NameLoopback: SocketKubelet, NamePods: SocketPods, NameInsecure: SocketInsecure}

// SetConfig is which doors a Set opens, at which addresses, with what
// chain and limits, and what they serve. An empty address turns its door
// off.
type SetConfig struct {
	// NodeName is this node: its identity has the doors' reserved lanes.
	NodeName string
	// ListenAddress is the kubelet's door, SecureListenAddress the pods'
	// door, InsecureListenAddress the plain-HTTP door where every caller
	// is the node.
	ListenAddress, SecureListenAddress, InsecureListenAddress string
	// TLS is the serving certificate and client CA of the TLS doors.
	TLS SetTLS
	// Bootstrap serves the pods' door a CSR-signed certificate for
	// BootstrapIPs, requested for BootstrapLifetime (0: the signer's).
	Bootstrap         bool
	BootstrapIPs      []net.IP
	BootstrapLifetime time.Duration
	// Pool is the pool door (PoolAddress, tokens for PoolAudience) and
	// what it serves; PoolAddress empty: no pool door.
	PoolAddress, PoolAudience string
	Pool                      PoolConfig
	Limits                    Limits
	// OfflineGrace bounds the stored answers standing in for the cloud.
	OfflineGrace time.Duration
	// ClusterScope authorizes this node's identity per request too;
	// ImpersonateNode forwards its writes as the node.
	ClusterScope, ImpersonateNode bool
	// Handler serves a door's requests: the local API behind the
	// daemon's own endpoints, labelled by door in the metrics.
	Handler func(name string) http.Handler
	// AuthFailed returns what counts a door's 401s.
	AuthFailed func(name string) func()
	Cloud      *rest.Config
	// Pods finds a bound token's pod among the held ones.
	Pods PodLookup
	// Held reports the reads whose decisions are stored.
	Held      func(attributes) bool
	Decisions DecisionStore
	Connected Connected
	// KeySealer keeps generated keys sealed on disk; nil without a state
	// key.
	KeySealer KeySealer
	Holdings  Holdings
	// Local verifies the node's pods' tokens; nil reviews every token.
	Local LocalVerifier
	// Sockets are where the doors listen: systemd's, else their own.
	Sockets *Sockets
	Logger  *slog.Logger
}

// Set is the local API's open doors, each a server on its listener.
type Set struct {
	servers   []*http.Server
	listeners []net.Listener
	// drains count what is busy on each server, so Shutdown closes its
	// connections once nothing is (drain.go); one per server, same order.
	drains []*Drain
	// probe is where the watchdog asks /livez: the first door opened.
	probe    net.Addr
	probeTLS bool
	// pods is the pods' door's certificate and binding (set_pods.go).
	pods    podsDoor
	sockets *Sockets
	// poolCert is the pool door's certificate; nil without a pool.
	poolCert *BootstrapServing
}

// OpenSet listens on the configured doors; on error it closes what it
// opened. The kubelet's door and the pods' door share one authentication
// and authorization chain; the insecure door makes every caller the node.
func OpenSet(c SetConfig) (*Set, error) {
	set := &Set{sockets: c.Sockets}
	if err := set.openAuthenticated(c); err != nil {
		return nil, errors.Join(err, set.Close())
	}
	if c.InsecureListenAddress != "" {
		lim := NewLimiter(c.Limits, LimiterConfig{NodeName: c.NodeName, Logger: c.Logger,
			Unauthenticated: c.AuthFailed(NameInsecure)})
		ops := c.Handler(NameInsecure)
		h := Insecure(WithoutCompression(ops), InsecureConfig{Limiter: lim, Operations: ops})
		if err := set.listen(c.InsecureListenAddress, nil, h, lim, c.Logger, NameInsecure); err != nil {
			return nil, errors.Join(err, set.Close())
		}
	}
	return set, nil
}

// openAuthenticated opens the TLS doors that are configured.
func (s *Set) openAuthenticated(c SetConfig) error {
	if c.ListenAddress == "" && c.SecureListenAddress == "" && c.PoolAddress == "" {
		return nil
	}
	tlsCfg, err := setTLS(c)
	if err != nil {
		return err
	}
	parts, err := newChainParts(c.Cloud)
	if err != nil {
		return err
	}
	chain := newChain(c, parts)
	podsTLS, err := s.pods.open(c, tlsCfg)
	if err != nil {
		return err
	}
	if c.ListenAddress != "" {
		if err := s.openDoor(c, chain, c.ListenAddress, NameLoopback, tlsCfg); err != nil {
			return err
		}
	}
	if c.SecureListenAddress != "" {
		if err := s.openDoor(c, chain, c.SecureListenAddress, NamePods, podsTLS); err != nil {
			return err
		}
	}
	return s.openPoolDoor(c, tlsCfg, parts)
}

// openDoor opens the authenticated door name at addr with its own limits
// (the pods' door waits for its address while it is not bound).
func (s *Set) openDoor(c SetConfig, chain SecureConfig, addr, name string, serveTLS *tls.Config) error {
	sc := chain
	sc.Limiter = NewLimiter(c.Limits, LimiterConfig{NodeName: c.NodeName, Logger: c.Logger,
		Unauthenticated: c.AuthFailed(name)})
	sc.Operations = c.Handler(name)
	h := sc.Operations
	if name == NameLoopback {
		h = WithoutCompression(h)
	}
	if name == NamePods && s.pods.unbound() {
		s.pending(addr, serveTLS, Secure(h, sc), sc.Limiter, c.Logger)
		return nil
	}
	return s.listen(addr, serveTLS, Secure(h, sc), sc.Limiter, c.Logger, name)
}

// listen serves h on addr within lim, with TLS when tlsCfg is set.
func (s *Set) listen(addr string, tlsCfg *tls.Config, h http.Handler, lim *Limiter, log *slog.Logger, name string) error {
	passed := s.sockets.Passed(doorSocket[name])
	ln, err := s.sockets.Listen(doorSocket[name], addr)
	if err != nil {
		return fmt.Errorf("listen %s door: %w", name, err)
	}
	if s.probe == nil {
		s.probe, s.probeTLS = ln.Addr(), tlsCfg != nil
	}
	srv := s.newServer(h, lim, log)
	ln = lim.Listener(ln, tlsCfg != nil)
	if tlsCfg != nil {
		srv.TLSConfig = lim.TLSConfig(tlsCfg)
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	s.servers, s.listeners = append(s.servers, srv), append(s.listeners, ln)
	log.Info("serving", "door", name, "address", ln.Addr().String(), "tls", tlsCfg != nil, "systemdSocket", passed)
	return nil
}

// newServer is the HTTP server of one door.
func (s *Set) newServer(h http.Handler, lim *Limiter, log *slog.Logger) *http.Server {
	drain := NewDrain(nil)
	s.drains = append(s.drains, drain)
	connState := func(c net.Conn, st http.ConnState) {
		drain.ConnState(c, st)
		lim.ConnState(c, st)
	}
	return &http.Server{Handler: drain.Handler(h), ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		MaxHeaderBytes: maxHeaderBytes, ConnState: connState, ConnContext: lim.ConnContext,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)} // failed handshakes are the client's to see
}

// Probe is the first door opened, which the daemon can reach itself, and
// whether it is TLS; ok is false when no door listens.
func (s *Set) Probe() (addr net.Addr, isTLS, ok bool) {
	return s.probe, s.probeTLS, s.probe != nil
}

// Len is how many doors the set serves.
func (s *Set) Len() int { return len(s.servers) }

// Serve runs every door; each one's end is sent on errs. A door whose
// address is not bound yet is served once it is.
func (s *Set) Serve(wg *sync.WaitGroup, errs chan<- error) {
	for i, srv := range s.servers {
		ln := s.listeners[i]
		if ln == nil {
			wg.Go(func() { errs <- s.pods.serveWhenBound(srv) })
			continue
		}
		wg.Go(func() { errs <- srv.Serve(ln) })
	}
}

// Shutdown stops every door gracefully, all at once: each closes its
// connections once no request is in flight on it (drain.go), not a second
// later as net/http's HTTP/2 GOAWAY would.
func (s *Set) Shutdown(ctx context.Context) error {
	s.stopCerts()
	errs := make([]error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = s.drains[i].Shutdown(ctx, srv) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every door and its listener at once.
func (s *Set) Close() error {
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

// stopCerts stops the doors' certificate rotations.
func (s *Set) stopCerts() {
	s.pods.stop()
	if s.poolCert != nil {
		s.poolCert.Stop()
	}
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
