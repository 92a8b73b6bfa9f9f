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
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/auth"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// idleTimeout closes keep-alive connections idle this long.
	idleTimeout = 90 * time.Second
	// maxHeaderBytes bounds request headers (bytes); a bearer token and
	// kubectl's headers fit well within it.
	maxHeaderBytes = 64 << 10
)

// doorSet is the local API's open doors: the loopback door and the TLS
// door, each a server on its listener.
type doorSet struct {
	servers   []*http.Server
	listeners []net.Listener
	// loopback is the loopback door's listener; nil when it is off.
	loopback net.Listener
}

// loopbackAddr is the loopback door's address, or nil when it is off.
func (s *doorSet) loopbackAddr() net.Addr {
	if s.loopback == nil {
		return nil
	}
	return s.loopback.Addr()
}

// doorDeps are what the doors wrap and consult.
type doorDeps struct {
	// loopback and tls serve each door's requests: the local API behind
	// the daemon's own endpoints (/metrics, /debug/pprof/, health), which
	// are never forwarded.
	loopback, tls http.Handler
	cloud         *rest.Config
	caches        []*versioncache.Cache
	store         *metastore.Store
	link          *cloudsync.Link
	log           *slog.Logger
	// keySealer keeps a generated TLS key sealed on disk; nil without a
	// state key.
	keySealer auth.KeySealer
}

// openDoors listens on the configured doors; on error it closes what it
// opened.
func openDoors(cfg config, d doorDeps) (*doorSet, error) {
	set := &doorSet{}
	if cfg.ListenAddress != "" {
		lim := auth.NewLimiter(cfg.limits())
		h := auth.Loopback(withoutCompression(d.loopback), auth.LoopbackConfig{Limiter: lim, Operations: d.loopback})
		if err := set.listen(cfg.ListenAddress, nil, h, lim, d.log, "loopback"); err != nil {
			return nil, err
		}
		set.loopback = set.listeners[len(set.listeners)-1]
	}
	if cfg.SecureListenAddress != "" {
		if err := openSecureDoor(cfg, d, set); err != nil {
			return nil, errors.Join(err, set.close())
		}
	}
	return set, nil
}

func openSecureDoor(cfg config, d doorDeps, set *doorSet) error {
	tlsCfg, err := secureTLS(cfg, d.keySealer, d.log)
	if err != nil {
		return err
	}
	sc, err := secureConfig(cfg, d)
	if err != nil {
		return err
	}
	sc.Limiter = auth.NewLimiter(cfg.limits())
	sc.Operations = d.tls
	return set.listen(cfg.SecureListenAddress, tlsCfg, auth.Secure(d.tls, sc), sc.Limiter, d.log, "tls")
}

// withoutCompression serves h as if no client accepted gzip: on the
// loopback door compressing a body only costs CPU on both ends (kube-
// apiserver's gzip is for networks), so bodies go out as they are cached.
// The TLS door compresses large bodies for clients that ask, as kube does.
func withoutCompression(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		h.ServeHTTP(w, r)
	})
}

// secureConfig wires authentication, authorization and forwarding against
// the cloud.
func secureConfig(cfg config, d doorDeps) (auth.SecureConfig, error) {
	cs, err := kubernetes.NewForConfig(d.cloud)
	if err != nil {
		return auth.SecureConfig{}, fmt.Errorf("review client: %w", err)
	}
	fwd, err := auth.NewForwarder(d.cloud)
	if err != nil {
		return auth.SecureConfig{}, err
	}
	decisions := metaDecisions{d.store}
	return auth.SecureConfig{
		Authenticator: auth.NewAuthenticator(auth.AuthenticatorConfig{NodeName: cfg.NodeName,
			Reviews: cs.AuthenticationV1().TokenReviews(), Store: decisions, Pods: podLookup(d.caches),
			Connected: d.link.Connected, OfflineGrace: cfg.OfflineAuthzGrace, Logger: d.log}),
		Authorizer: auth.NewAuthorizer(auth.AuthorizerConfig{Reviews: cs.AuthorizationV1().SubjectAccessReviews(),
			Store: decisions, Connected: d.link.Connected, OfflineGrace: cfg.OfflineAuthzGrace, Logger: d.log}),
		Forwarder: fwd,
	}, nil
}

// secureTLS loads or generates the TLS door's serving certificate.
func secureTLS(cfg config, sealer auth.KeySealer, log *slog.Logger) (*tls.Config, error) {
	o := auth.TLSOptions{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSPrivateKeyFile, ClientCAFile: cfg.ClientCAFile,
		DataDir: cfg.DataDir, Host: cfg.NodeName, DNS: []string{"localhost"}, Logger: log, KeySealer: sealer}
	if host, _, err := net.SplitHostPort(cfg.SecureListenAddress); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
			o.IPs = append(o.IPs, ip)
		}
	}
	tlsCfg, caPath, err := auth.ServerTLS(o, time.Now())
	if err != nil {
		return nil, fmt.Errorf("tls door: %w", err)
	}
	if caPath != "" {
		log.Info("tls door uses a generated serving certificate", "ca", caPath)
	}
	return tlsCfg, nil
}

// listen serves h on addr within lim, with TLS when tlsCfg is set.
func (s *doorSet) listen(addr string, tlsCfg *tls.Config, h http.Handler, lim *auth.Limiter, log *slog.Logger, name string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s door: %w", name, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		MaxHeaderBytes: maxHeaderBytes, ConnState: lim.ConnState}
	ln = lim.Listener(ln)
	if tlsCfg != nil {
		srv.TLSConfig = tlsCfg
		ln = tls.NewListener(ln, tlsCfg)
	}
	s.servers, s.listeners = append(s.servers, srv), append(s.listeners, ln)
	log.Info("serving", "door", name, "address", ln.Addr().String())
	return nil
}

// serve runs every door; each one's end is sent on errs.
func (s *doorSet) serve(wg *sync.WaitGroup, errs chan<- error) {
	for i, srv := range s.servers {
		ln := s.listeners[i]
		wg.Go(func() { errs <- srv.Serve(ln) })
	}
}

// shutdown stops every door gracefully, all at once.
func (s *doorSet) shutdown(ctx context.Context) error {
	errs := make([]error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = srv.Shutdown(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *doorSet) close() error {
	var errs []error
	for i, srv := range s.servers {
		errs = append(errs, srv.Close(), ignoreClosed(s.listeners[i].Close()))
	}
	return errors.Join(errs...)
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
