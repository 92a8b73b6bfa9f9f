package link

import (
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// cloudTransport is the state of one of client-go's cloud transports
// (one per TLS configuration: the node's credentials, or none for the
// bearer-token clients), shared by all its clients.
type cloudTransport struct {
	// pinned is client-go's transport, kept for as long as the Conns:
	// client-go's cache holds it weakly, and once the clients of the
	// moment drop it (the start-up SelfSubjectReview's), the next client
	// would get a new transport and dial a second connection beside the
	// first. Immutable.
	pinned http.RoundTripper
	// open counts the transport's connections dialed and not closed; a
	// dialed one may still be in its TLS handshake, so dialing, not open,
	// tells whether the first is usable yet.
	open atomic.Int32

	mu sync.Mutex
	// dialing is closed once the request dialing the transport's first
	// connection has it, or gave up; nil when none is. Guarded by mu.
	dialing chan struct{}
}

// firstConn lets one request at a time through while its transport has
// no connection, and the others once that request has one. net/http dials
// a connection for every request waiting for one, and learns that the
// connection speaks HTTP/2, so could have carried them all, only after the
// TLS handshake: a start's concurrent first requests (the probe, every
// sync's list or watch) would each cost the cloud a TLS handshake, then
// all but one connection would be closed. With it a start costs the cloud
// one handshake per transport. A request that fails to get a connection
// lets the waiting ones through, each dialing its own as before.
type firstConn struct {
	next      http.RoundTripper
	transport *cloudTransport
}

var _ utilnet.RoundTripperWrapper = (*firstConn)(nil)

// WrappedRoundTripper implements utilnet.RoundTripperWrapper.
func (f *firstConn) WrappedRoundTripper() http.RoundTripper { return f.next }

// RoundTrip implements http.RoundTripper.
func (f *firstConn) RoundTrip(req *http.Request) (*http.Response, error) {
	ct := f.transport
	ct.mu.Lock()
	wait, first := ct.dialing, false
	if wait == nil && ct.open.Load() == 0 {
		ct.dialing, first = make(chan struct{}), true
	}
	ct.mu.Unlock()
	switch {
	case first:
		return f.dialFirst(req)
	case wait == nil: // connected, and no first dial in flight
		return f.next.RoundTrip(req)
	}
	select {
	case <-wait:
		return f.next.RoundTrip(req)
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// dialFirst sends req, letting the waiting requests go once req has a
// connection (its TLS handshake done, HTTP/2 negotiated and the
// connection pooled) or failed.
func (f *firstConn) dialFirst(req *http.Request) (*http.Response, error) {
	var once sync.Once
	release := func() {
		once.Do(func() {
			f.transport.mu.Lock()
			close(f.transport.dialing)
			f.transport.dialing = nil
			f.transport.mu.Unlock()
		})
	}
	defer release()
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { release() },
	})
	return f.next.RoundTrip(req.WithContext(ctx))
}
