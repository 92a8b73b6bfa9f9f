package link

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/connrotation"
	"k8s.io/utils/clock"
)

const (
	// dialTimeout bounds a TCP dial to the cloud, on the injected clock: a
	// black-holed link fails after it instead of after the kernel's SYN
	// retries (about 2 min) or client-go's 30 s. Every client of the cloud
	// shares the transport it bounds, the local API's proxy included, so
	// an unreachable cloud is answered 503 within seconds. Linux sends
	// three SYNs within it (at 0, 1 and 3 s).
	dialTimeout = 5 * time.Second
	// dialKeepAlive is the TCP keep-alive period of a connection dialed by
	// the fallback dialer, client-go's own.
	dialKeepAlive = 30 * time.Second
	// pingCloseSlack is how far from http2ReadIdleTimeout+http2PingTimeout
	// of silence a connection's close may be and still be its HTTP/2
	// client's close for an unanswered PING: the client closes it at
	// exactly that silence after its last frame; goroutine scheduling, and
	// a frame read in part before the link went silent, move the measure
	// by far less. An idle connection closed by its transport (90 s) or
	// one closed while its PING was in flight is outside it.
	pingCloseSlack = time.Second
)

// Connections is what a Link knows of the cloud's connections: when one
// last read a byte, when one closed, and how to close them all.
type Connections interface {
	// LastRead is when any connection last read a byte; zero if none did.
	// A dial that completed is not a read.
	LastRead() time.Time
	// Closed receives a value after any connection closed.
	Closed() <-chan struct{}
	// CloseAll closes every connection, so the next request dials anew.
	CloseAll()
	// LostPing is when a connection was last closed because its HTTP/2
	// PING went unanswered while no connection read a byte; zero if none
	// was. It is reported on Closed too.
	LostPing() time.Time
}

// Conns watches the connections of the cloud transports it wraps. Every
// byte read counts, HTTP/2 PING answers included, and nothing else (a
// completed dial does not), so a healthy connection
// is heard at least every http2ReadIdleTimeout even when no watch event
// arrives. Closed reports a connection lost: one the cloud or the network
// ended (a read failed), or one closed after being silent for
// http2ReadIdleTimeout, as the HTTP/2 client closes one that failed its
// PING; not a healthy one the client closed because it was idle. LostPing
// tells the PING's close apart when no connection read a byte meanwhile:
// the link, not one connection, went silent. Safe for concurrent use.
type Conns struct {
	clock   clock.WithDelayedExecution      // immutable
	tracker *connrotation.ConnectionTracker // immutable
	// lastRead is the Unix nanoseconds of the last byte read.
	lastRead atomic.Int64
	// lostPing is the Unix nanoseconds of the last close of a connection
	// whose PING went unanswered while every connection was silent.
	lostPing atomic.Int64
	// closed holds one value once a connection closed. Immutable.
	closed chan struct{}
	// watches counts the open watches of every client of the transport
	// (watchCounter).
	watches atomic.Int64

	// wrapped holds the transports whose dialer is wrapped already, with
	// their connections' state. Guarded by baseTransportMu.
	wrapped map[*http.Transport]*cloudTransport
}

// NewConns returns a Conns timed by c; nil means the real clock.
func NewConns(c clock.WithDelayedExecution) *Conns {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Conns{clock: c, tracker: connrotation.NewConnectionTracker(),
		closed: make(chan struct{}, 1), wrapped: map[*http.Transport]*cloudTransport{}}
}

// OpenWatches is how many watches the clients of the transport hold open
// on the cloud: answered, and not yet ended by either side.
func (c *Conns) OpenWatches() int { return int(c.watches.Load()) }

// LastRead implements Connections.
func (c *Conns) LastRead() time.Time {
	n := c.lastRead.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Closed implements Connections.
func (c *Conns) Closed() <-chan struct{} { return c.closed }

// LostPing implements Connections.
func (c *Conns) LostPing() time.Time {
	n := c.lostPing.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// CloseAll implements Connections.
func (c *Conns) CloseAll() { c.tracker.CloseAll() }

// wrapLocked makes t's new connections watched, their dials bounded by
// dialTimeout, and returns t's state; rt is what client-go built around t,
// kept for as long as c (see cloudTransport.pinned). client-go shares one
// transport between the clients of equal TLS configurations, so t is
// wrapped once. http.DefaultTransport, shared by the whole process, is
// left alone (nil). baseTransportMu must be held.
func (c *Conns) wrapLocked(t *http.Transport, rt http.RoundTripper) *cloudTransport {
	if t == http.DefaultTransport {
		return nil
	}
	if ct, ok := c.wrapped[t]; ok {
		return ct
	}
	ct := &cloudTransport{pinned: rt}
	c.wrapped[t] = ct
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: dialKeepAlive}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := c.boundedDial(ctx, dial, network, addr)
		if err != nil {
			return nil, err
		}
		// A completed dial is not the cloud heard: a middlebox (or a
		// proxy whose upstream is gone) completes the handshake and then
		// forwards nothing. Only the connection's own silence starts here.
		w := &watchedConn{Conn: conn, conns: c, transport: ct}
		w.lastRead.Store(c.clock.Now().UnixNano())
		ct.open.Add(1)
		return c.tracker.Track(w), nil
	}
	return ct
}

// boundedDial runs dial, cancelled after dialTimeout on the clock.
func (c *Conns) boundedDial(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := c.clock.AfterFunc(dialTimeout, cancel)
	defer timer.Stop()
	return dial(ctx, network, addr)
}

// heard records a read now, and returns now in Unix nanoseconds.
func (c *Conns) heard() int64 {
	now := c.clock.Now().UnixNano()
	c.lastRead.Store(now)
	return now
}

// closedOne reports a closed connection without blocking.
func (c *Conns) closedOne() {
	select {
	case c.closed <- struct{}{}:
	default: // one report is pending already
	}
}

// watchedConn reports its reads and its loss to conns.
type watchedConn struct {
	net.Conn
	conns     *Conns          // immutable
	transport *cloudTransport // immutable; counts it open until Close; may be nil
	// lastRead is the Unix nanoseconds of this connection's last read.
	lastRead atomic.Int64
	// failed is set once a read failed other than by Close.
	failed    atomic.Bool
	closeOnce sync.Once
}

func (w *watchedConn) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if n > 0 {
		w.lastRead.Store(w.conns.heard())
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		w.failed.Store(true)
	}
	return n, err
}

func (w *watchedConn) Close() error {
	w.closeOnce.Do(func() {
		if w.transport != nil && w.transport.open.Add(-1) == 0 {
			w.transport.ready.Store(false)
		}
		now := w.conns.clock.Now().UnixNano()
		silent := time.Duration(now - w.lastRead.Load())
		switch {
		case w.failed.Load():
			w.conns.closedOne()
		case silent >= http2ReadIdleTimeout:
			if lostPing(silent, time.Duration(now-w.conns.lastRead.Load())) {
				w.conns.lostPing.Store(now)
			}
			w.conns.closedOne()
		}
	})
	return w.Conn.Close()
}

// lostPing reports whether a connection closed after silent, while every
// connection had been silent for linkSilent, was closed by its HTTP/2
// client for a PING that no byte on any connection answered.
func lostPing(silent, linkSilent time.Duration) bool {
	const closesAt = http2ReadIdleTimeout + http2PingTimeout
	return silent >= closesAt-pingCloseSlack && silent <= closesAt+pingCloseSlack &&
		linkSilent >= http2PingTimeout-pingCloseSlack
}
