package link

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

const (
	// http2ReadIdleTimeout is how long a cloud connection may be silent
	// before the client sends an HTTP/2 PING. client-go's default is 30 s;
	// a watch on a half-open connection must be noticed much sooner. Each
	// PING costs the cloud a read, a write and two wake-ups of the
	// connection's goroutines, more than the frames of a Lease renewal, so
	// it is past the kubelet's 10 s renewal period and its 4% jitter
	// (10.4 s), with room for the renewal's round trip: a connection
	// carrying a node's renewals is never silent that long and sends no
	// PING, as a kubelet's own connection sends none. At 6 s it PINGed
	// once between every two renewals, 6 times a minute.
	http2ReadIdleTimeout = 11 * time.Second
	// http2PingTimeout is how long a PING may go unanswered before the
	// connection, and every watch on it, is closed; the Link then reports
	// the link down without a probe when no connection read a byte
	// meanwhile (Conns.LostPing), so a half-open link is reported within
	// http2ReadIdleTimeout+http2PingTimeout (14 s). It is a probe's own
	// timeout (probeTimeout): a PING's answer needs less of the cloud than
	// a probe's GET.
	http2PingTimeout = 3 * time.Second
	// probePath is what the link prober reads: tiny, served without
	// touching etcd, and readable by a node's identity.
	probePath = "/version"
)

// ConfigureTransport makes cfg's HTTP/2 connections send health-check
// PINGs, so a half-open connection to the cloud is closed, failing its
// requests and watches, within http2ReadIdleTimeout+http2PingTimeout
// instead of hanging; and, with conns, makes conns watch every connection
// (see Conns), keeps client-go's transport for cfg's TLS configuration
// for as long as conns, so that every client of cfg, whenever built,
// shares its connection, and lets only one request at a time dial while
// that transport has no connection (see firstConn), and counts the
// watches open through it (Conns.OpenWatches). It keeps any WrapTransport
// already set.
func ConfigureTransport(cfg *rest.Config, conns *Conns) {
	wrap := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if t := baseTransport(rt); t != nil {
			if ct := configureBase(t, rt, conns); ct != nil {
				rt = &firstConn{next: rt, transport: ct}
			}
		}
		if conns != nil {
			rt = &watchCounter{next: rt, open: &conns.watches}
		}
		if wrap != nil {
			return wrap(rt)
		}
		return rt
	}
}

// baseTransportMu serialises the changes to a base transport: client-go
// shares one between the clients of equal TLS configurations, which may
// be built concurrently.
var baseTransportMu sync.Mutex

// baseTransport is the *http.Transport client-go built under rt, which
// its transport cache and CA reloading wrap; nil if there is none.
func baseTransport(rt http.RoundTripper) *http.Transport {
	for rt != nil {
		switch t := rt.(type) {
		case *http.Transport:
			return t
		case utilnet.RoundTripperWrapper:
			rt = t.WrappedRoundTripper()
		default:
			return nil
		}
	}
	return nil
}

// configureBase sets the PING timeouts on t and lets conns watch its
// connections, returning their state (nil without conns). rt is what
// client-go built around t. golang.org/x/net/http2, which client-go
// configures, reads the timeouts from http.Transport.HTTP2 for each new
// connection and prefers them to its own fields.
func configureBase(t *http.Transport, rt http.RoundTripper, conns *Conns) *cloudTransport {
	baseTransportMu.Lock()
	defer baseTransportMu.Unlock()
	var ct *cloudTransport
	if conns != nil {
		ct = conns.wrapLocked(t, rt)
	}
	if h := t.HTTP2; h != nil && h.SendPingTimeout == http2ReadIdleTimeout && h.PingTimeout == http2PingTimeout {
		return ct // a transport shared from client-go's cache, set already
	}
	h := &http.HTTP2Config{}
	if t.HTTP2 != nil {
		*h = *t.HTTP2
	}
	h.SendPingTimeout, h.PingTimeout = http2ReadIdleTimeout, http2PingTimeout
	t.HTTP2 = h
	return ct
}

// NewProbe returns a link probe for Config.Probe: a GET of probePath
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
