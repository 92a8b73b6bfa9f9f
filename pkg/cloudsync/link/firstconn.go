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
	// open counts the transport's connections dialed and not closed.
	open atomic.Int32
	// ready is set once a request got one of the transport's connections
	// (its TLS handshake done, HTTP/2 negotiated), and cleared when the
	// last one closes: a dialed connection may still be in its handshake,
	// so open alone does not tell whether the others could share it.
	ready atomic.Bool

	mu sync.Mutex
	// dialing is the round of the request dialing while the transport is
	// not ready; nil when none is. Guarded by mu.
	dialing *dialRound
}

// dialRound is one request's attempt to give its transport a connection.
type dialRound struct {
	done chan struct{} // closed once the attempt got a connection or ended
	// handOver is set before done is closed when the dialing request
	// gave up (its own context ended, as a probe's does after its
	// timeout) before it had a connection: the cloud was not found
	// unreachable, so the next waiting request dials in its place instead
	// of every waiting request dialing its own.
	handOver bool
}

// firstConn lets one request at a time through while its transport has
// no ready connection, and the others once that request has one. net/http
// dials a connection for every request waiting for one, and learns that
// the connection speaks HTTP/2, so could have carried them all, only
// after the TLS handshake: a start's concurrent first requests (the
// probe, every sync's list or watch) would each cost the cloud a TLS
// handshake, then all but one connection would be closed. With it a start
// costs the cloud one handshake per transport. On a busy machine the
// first request may be one that gives up early (the probe, after
// probeTimeout, while the handshake is still under way); the next waiting
// request then dials in its place. A request that fails to get a
// connection otherwise (refused, timed out, a TLS error) lets the waiting
// ones through, each dialing its own as before.
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
	for {
		ct.mu.Lock()
		round := ct.dialing
		if round == nil && !ct.ready.Load() {
			round = &dialRound{done: make(chan struct{})}
			ct.dialing = round
			ct.mu.Unlock()
			return f.dialFirst(req, round)
		}
		ct.mu.Unlock()
		if round == nil { // ready, and no dial in flight
			return f.next.RoundTrip(req)
		}
		select {
		case <-round.done:
			if !round.handOver {
				return f.next.RoundTrip(req)
			}
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

// dialFirst sends req, letting the waiting requests go once req has a
// connection or failed, or handing the dial over to one of them when
// req's own context ended first.
func (f *firstConn) dialFirst(req *http.Request, round *dialRound) (*http.Response, error) {
	ct := f.transport
	var once sync.Once
	release := func(handOver bool) {
		once.Do(func() {
			ct.mu.Lock()
			round.handOver = handOver
			close(round.done)
			ct.dialing = nil
			ct.mu.Unlock()
		})
	}
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) {
			ct.ready.Store(true)
			release(false)
		},
	})
	resp, err := f.next.RoundTrip(req.WithContext(ctx))
	release(err != nil && req.Context().Err() != nil)
	return resp, err
}
