package cloudsync

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

const (
	// http2ReadIdleTimeout is how long a cloud connection may be silent
	// before the client sends an HTTP/2 PING. client-go's default is 30 s;
	// a watch on a half-open connection must be noticed much sooner.
	http2ReadIdleTimeout = 5 * time.Second
	// http2PingTimeout is how long a PING may go unanswered before the
	// connection, and every watch on it, is closed.
	http2PingTimeout = 5 * time.Second
	// probePath is what the link prober reads: tiny, served without
	// touching etcd, and readable by a node's identity.
	probePath = "/version"
)

// ConfigureTransport makes cfg's HTTP/2 connections send health-check
// PINGs, so a half-open connection to the cloud fails its requests and
// watches within http2ReadIdleTimeout+http2PingTimeout instead of hanging.
// It keeps any WrapTransport already set.
func ConfigureTransport(cfg *rest.Config) {
	wrap := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		setHTTP2HealthCheck(rt)
		if wrap != nil {
			return wrap(rt)
		}
		return rt
	}
}

// setHTTP2HealthCheck sets the PING timeouts on rt if it is the base
// *http.Transport client-go built. golang.org/x/net/http2, which client-go
// configures, reads them from http.Transport.HTTP2 for each new connection
// and prefers them to its own fields.
func setHTTP2HealthCheck(rt http.RoundTripper) {
	t, ok := rt.(*http.Transport)
	if !ok {
		return
	}
	if h := t.HTTP2; h != nil && h.SendPingTimeout == http2ReadIdleTimeout && h.PingTimeout == http2PingTimeout {
		return // a transport shared from client-go's cache, set already
	}
	h := &http.HTTP2Config{}
	if t.HTTP2 != nil {
		*h = *t.HTTP2
	}
	h.SendPingTimeout, h.PingTimeout = http2ReadIdleTimeout, http2PingTimeout
	t.HTTP2 = h
}

// NewProbe returns a link probe for LinkConfig.Probe: a GET of probePath
// through cfg, so it shares the connections the watches use. A 429 is
// returned as is: the Link counts it as reachable and waits out its
// Retry-After.
func NewProbe(cfg *rest.Config) (func(ctx context.Context) error, error) {
	c := rest.CopyConfig(cfg)
	c.RateLimiter, c.QPS = nil, -1 // probes must not queue behind syncs
	d, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("link probe client: %w", err)
	}
	rc := d.RESTClient()
	return func(ctx context.Context) error {
		return rc.Get().AbsPath(probePath).MaxRetries(0).Do(ctx).Error()
	}, nil
}
