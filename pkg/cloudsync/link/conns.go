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

// dialTimeout bounds a TCP dial to the cloud when the transport has no
// dialer of its own, as client-go's default dialer does.
const dialTimeout = 30 * time.Second

// Connections is what a Link knows of the cloud's connections: when one
// last read a byte, when one closed, and how to close them all.
type Connections interface {
	// LastRead is when any connection last read a byte; zero if none did.
	LastRead() time.Time
	// Closed receives a value after any connection closed.
	Closed() <-chan struct{}
	// CloseAll closes every connection, so the next request dials anew.
	CloseAll()
}

// Conns watches the connections of the cloud transports it wraps. Every
// byte read counts, HTTP/2 PING answers included, so a healthy connection
// is heard at least every http2ReadIdleTimeout even when no watch event
// arrives. Closed reports a connection lost: one the cloud or the network
// ended (a read failed), or one closed after being silent for
// http2ReadIdleTimeout, as the HTTP/2 client closes one that failed its
// PING; not a healthy one the client closed because it was idle. Safe for
// concurrent use.
type Conns struct {
	clock   clock.PassiveClock              // immutable
	tracker *connrotation.ConnectionTracker // immutable
	// lastRead is the Unix nanoseconds of the last byte read.
	lastRead atomic.Int64
	// closed holds one value once a connection closed. Immutable.
	closed chan struct{}

	// wrapped holds the transports whose dialer is wrapped already.
	// Guarded by baseTransportMu.
	wrapped map[*http.Transport]struct{}
}

// NewConns returns a Conns timed by c; nil means the real clock.
func NewConns(c clock.PassiveClock) *Conns {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Conns{clock: c, tracker: connrotation.NewConnectionTracker(),
		closed: make(chan struct{}, 1), wrapped: map[*http.Transport]struct{}{}}
}

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

// CloseAll implements Connections.
func (c *Conns) CloseAll() { c.tracker.CloseAll() }

// wrapLocked makes t's new connections watched. client-go shares one
// transport between the clients of equal TLS configurations, so t is
// wrapped once. http.DefaultTransport, shared by the whole process, is left
// alone. baseTransportMu must be held.
func (c *Conns) wrapLocked(t *http.Transport) {
	if t == http.DefaultTransport {
		return
	}
	if _, ok := c.wrapped[t]; ok {
		return
	}
	c.wrapped[t] = struct{}{}
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w := &watchedConn{Conn: conn, conns: c}
		w.lastRead.Store(c.heard())
		return c.tracker.Track(w), nil
	}
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
	conns *Conns
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
		silent := w.conns.clock.Now().UnixNano() - w.lastRead.Load()
		if w.failed.Load() || time.Duration(silent) >= http2ReadIdleTimeout {
			w.conns.closedOne()
		}
	})
	return w.Conn.Close()
}
