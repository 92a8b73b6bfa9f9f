package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"k8s.io/utils/clock"
)

// bindRetryInterval is how often the pods' door tries its address again
// while no interface holds it (the operator assigns a link-local address).
const bindRetryInterval = 5 * time.Second

// podsDoor is the pods' door's certificate bootstrap and the binding of
// its address, which may not be assigned yet when the daemon starts.
type podsDoor struct {
	// bootstrap serves the door's CSR-signed certificate; nil without
	// tls-bootstrap. Set by open, then read-only.
	bootstrap *door.BootstrapServing
	// addr is the door's address; set by open, then read-only.
	addr  string
	log   *slog.Logger
	clock clock.WithTicker
	// lim caps the door's connections once it listens; set by pending.
	lim *door.Limiter

	mu sync.Mutex
	// bindErr is why addr is not bound; nil once bound. Guarded by mu.
	bindErr error
	// done is closed by stop, ending the wait for the address. Guarded
	// by mu.
	done    chan struct{}
	stopped bool
}

// open checks the door's address and, with tls-bootstrap, starts the
// certificate manager; it returns the door's TLS configuration.
func (p *podsDoor) open(cfg config, d doorDeps, base *tls.Config) (*tls.Config, error) {
	p.addr, p.log, p.done, p.clock = cfg.SecureListenAddress, d.log, make(chan struct{}), clock.RealClock{}
	if p.addr == "" {
		return base, nil
	}
	// A socket systemd passed is bound already (FreeBind= before the
	// address exists).
	if err := door.CheckBound(p.addr); errors.Is(err, door.ErrAddressNotBound) && !d.sockets.Passed(door.SocketPods) {
		p.bindErr = err
		d.log.Warn("the pods' door's address is not assigned to any interface: the door opens once it is "+
			"(e.g. ip addr add 169.254.20.10/32 dev lo)", "address", p.addr, "err", err)
	}
	if !cfg.TLSBootstrap {
		return base, nil
	}
	b, err := door.NewBootstrapServing(door.BootstrapOptions{Cloud: d.cloud, NodeName: cfg.NodeName, IPs: cfg.bootstrapIPs(),
		DataDir: cfg.DataDir, KeySealer: d.keySealer, Lifetime: cfg.TLSBootstrapLifetime, Logger: d.log})
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

// pending adds the pods' door as a server with no listener yet; serve
// waits for its address.
func (s *doorSet) pending(addr string, tlsCfg *tls.Config, h http.Handler, lim *door.Limiter, log *slog.Logger) {
	srv := s.newDoorServer(h, lim, log)
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
		p.log.Info("serving", "door", doorTLS, "address", ln.Addr().String(), "tls", true)
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

// note is the door's /readyz line: informational, never failing.
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
