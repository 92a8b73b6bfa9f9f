package door

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// bindRetryInterval is how often the pods' door tries its address again
// while no interface holds it (the operator assigns a link-local address).
const bindRetryInterval = 5 * time.Second

// podsDoor is the pods' door's certificate bootstrap and the binding of
// its address, which may not be assigned yet when the daemon starts.
type podsDoor struct {
	// bootstrap serves the door's CSR-signed certificate; nil without
	// Bootstrap. Set by open, then read-only.
	bootstrap *BootstrapServing
	// addr is the door's address; set by open, then read-only.
	addr  string
	log   *slog.Logger
	clock clock.WithTicker
	// lim caps the door's connections once it listens; set by pending.
	lim *Limiter

	mu sync.Mutex
	// bindErr is why addr is not bound; nil once bound. Guarded by mu.
	bindErr error
	// done is closed by stop, ending the wait for the address. Guarded
	// by mu.
	done    chan struct{}
	stopped bool
}

// open checks the door's address and, with Bootstrap, starts the
// certificate manager; it returns the door's TLS configuration.
func (p *podsDoor) open(c SetConfig, base *tls.Config) (*tls.Config, error) {
	p.addr, p.log, p.done, p.clock = c.SecureListenAddress, c.Logger, make(chan struct{}), clock.RealClock{}
	if p.addr == "" {
		return base, nil
	}
	// A socket systemd passed is bound already (FreeBind= before the
	// address exists).
	if err := CheckBound(p.addr); errors.Is(err, ErrAddressNotBound) && !c.Sockets.Passed(SocketPods) {
		p.bindErr = err
		c.Logger.Warn("the pods' door's address is not assigned to any interface: the door opens once it is "+
			"(e.g. ip addr add 169.254.20.10/32 dev lo)", "address", p.addr, "err", err)
	}
	if !c.Bootstrap {
		return base, nil
	}
	b, err := NewBootstrapServing(BootstrapOptions{Cloud: c.Cloud, NodeName: c.NodeName, IPs: c.BootstrapIPs,
		DataDir: c.TLS.DataDir, KeySealer: c.KeySealer, Lifetime: c.BootstrapLifetime, Logger: c.Logger})
	if err != nil {
		return nil, err
	}
	p.bootstrap = b
	b.Start()
	return b.ServerTLS(base), nil
}

// unbound reports whether the door's address is not bound yet.
func (p *podsDoor) unbound() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bindErr != nil
}

// pending adds the pods' door as a server with no listener yet; Serve
// waits for its address.
func (s *Set) pending(addr string, tlsCfg *tls.Config, h http.Handler, lim *Limiter, log *slog.Logger) {
	srv := s.newServer(h, lim, log)
	srv.Addr, srv.TLSConfig = addr, lim.TLSConfig(tlsCfg)
	s.pods.lim = lim
	s.servers, s.listeners = append(s.servers, srv), append(s.listeners, nil)
}

// serveWhenBound listens on the door's address once an interface holds
// it, then serves srv; stop ends the wait.
func (p *podsDoor) serveWhenBound(srv *http.Server) error {
	t := p.clock.NewTicker(bindRetryInterval)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return http.ErrServerClosed
		case <-t.C():
		}
		ln, err := net.Listen("tcp", srv.Addr)
		if err != nil {
			p.setBindErr(err)
			continue
		}
		p.setBindErr(nil)
		p.log.Info("serving", "door", NamePods, "address", ln.Addr().String(), "tls", true)
		return srv.Serve(tls.NewListener(p.lim.Listener(ln, true), srv.TLSConfig))
	}
}

func (p *podsDoor) setBindErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bindErr = err
}

// stop ends the certificate manager and the wait for the address.
func (p *podsDoor) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.done == nil {
		return
	}
	p.stopped = true
	close(p.done)
	if p.bootstrap != nil {
		p.bootstrap.Stop()
	}
}

// PodsNote is the pods' door's /readyz line: informational, never
// failing; ok is false without a pods' door.
func (s *Set) PodsNote() (name, info string, ok bool) {
	return s.pods.note()
}

func (p *podsDoor) note() (name, info string, ok bool) {
	if p == nil || p.addr == "" {
		return "", "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	info = fmt.Sprintf("%s bound", p.addr)
	if p.bindErr != nil {
		info = fmt.Sprintf("%s not bound (informational, does not affect readiness): %v; assign the address, the door opens within %s",
			p.addr, p.bindErr, bindRetryInterval)
	}
	if p.bootstrap != nil && p.bootstrap.Current() == nil {
		info += "; no signed serving certificate yet: approve the node's kubelet-serving CSR (kubectl get csr)"
	}
	return "pods-door", info, true
}
