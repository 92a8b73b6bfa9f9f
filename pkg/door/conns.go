package door

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

const (
	// DefaultMaxConnectionsPerSource caps the open connections of one
	// remote address per door: half of DefaultMaxConnections, so one
	// source never holds the door. Beyond it (and beyond the door's general
	// pool) a connection is kept only if its handshake presents this
	// node's client certificate; loopback is one source like any other.
	DefaultMaxConnectionsPerSource = DefaultMaxConnections / 2
	// nodeConnectionReserveDivisor reserves a quarter of a door's
	// connections (at most maxNodeConnectionReserve) for handshakes that
	// present this node's certificate.
	nodeConnectionReserveDivisor = 4
	// maxNodeConnectionReserve bounds that reserve: the kubelet and a
	// kubectl run as the node hold a handful of HTTP/2 connections.
	maxNodeConnectionReserve = 64
	// handshakeTimeout bounds the TLS handshake of an accepted connection,
	// so a connection that never completes one gives back its place soon.
	handshakeTimeout = 3 * time.Second
	// unauthenticatedIdleTimeout closes a connection idle this long that
	// has not yet carried an authenticated request; an authenticated one
	// keeps the server's idle timeout.
	unauthenticatedIdleTimeout = 5 * time.Second
	// maxConsecutiveUnauthorized is how many 401s in a row, with no
	// authenticated request between them, an HTTP/2 connection gets
	// before GOAWAY: a pod's watches share one connection and meet a
	// legitimate 401 when its token rotates.
	maxConsecutiveUnauthorized = 8
)

// errReserveOnly is the handshake error of a connection accepted into
// the node's reserve that does not present the node's certificate.
var errReserveOnly = errors.New("the door's connections are in use; only this node's certificate may use the reserve")

// doorConn is an accepted connection, counted until closed.
type doorConn struct {
	net.Conn
	lim    *Limiter
	source string // immutable; the remote IP
	// reserved is true for a connection accepted beyond the general pool
	// or its source's cap: only this node's certificate may use it.
	reserved bool // immutable
	// handshakeBy is when the TLS handshake must be done.
	handshakeBy time.Time // immutable
	handshook   atomic.Bool
	// handshakeSlot is set while dc holds one of the door's handshake
	// slots.
	handshakeSlot atomic.Bool
	// authenticated is set by the first authenticated request.
	authenticated atomic.Bool
	// unauthorized counts consecutive 401s.
	unauthorized atomic.Int32
	closeOnce    sync.Once

	mu   sync.Mutex
	idle clock.Timer // guarded by mu; closes an idle unauthenticated connection
}

// SetDeadline, SetReadDeadline and SetWriteDeadline keep any deadline
// set before the handshake within handshakeBy.
func (c *doorConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }
func (c *doorConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.clamp(t))
}
func (c *doorConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

func (c *doorConn) clamp(t time.Time) time.Time {
	if c.handshook.Load() || (!t.IsZero() && t.Before(c.handshakeBy)) {
		return t
	}
	return c.handshakeBy
}

// Write gives back a handshake slot on the connection's first write: the
// server's handshake flight is written in one go once its own crypto is
// done, so a client that then stalls holds no slot.
func (c *doorConn) Write(b []byte) (int, error) {
	if c.handshakeSlot.Load() {
		c.lim.releaseHandshake(c)
	}
	return c.Conn.Write(b)
}

// Close closes the connection and gives back its place once.
func (c *doorConn) Close() error {
	c.closeOnce.Do(func() {
		c.stopIdle()
		c.lim.releaseHandshake(c)
		c.lim.releaseConn(c)
	})
	return c.Conn.Close()
}

func (c *doorConn) stopIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
}

// connListener counts and places accepted connections.
type connListener struct {
	net.Listener
	lim *Limiter
	tls bool
}

// Accept returns the next connection the door has room for; one it has
// none for is closed at once.
func (l *connListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		dc, ok := l.lim.admitConn(c)
		if !ok {
			l.lim.refusals.note("connection refused: the door and its reserve are full")
			_ = c.Close()
			continue
		}
		dc.handshakeBy = l.lim.clock.Now().Add(handshakeTimeout)
		if !l.tls {
			dc.handshook.Store(true) // nothing to verify: every caller is the node
			return dc, nil
		}
		_ = dc.Conn.SetDeadline(dc.handshakeBy)
		return dc, nil
	}
}

// connReserve is how many of max connections only the node may use.
func connReserve(maxConns int) int {
	return min(maxNodeConnectionReserve, maxConns/nodeConnectionReserveDivisor)
}

// admitConn places c in the general pool, or in the node's reserve when
// the pool or its source's share is full, or refuses it.
func (l *Limiter) admitConn(c net.Conn) (*doorConn, bool) {
	dc := &doorConn{Conn: c, lim: l, source: sourceOf(c.RemoteAddr().String())}
	if l.limits.MaxConnections <= 0 {
		return dc, true
	}
	perSource := l.limits.MaxConnectionsPerSource
	l.mu.Lock()
	defer l.mu.Unlock()
	general := l.limits.MaxConnections - connReserve(l.limits.MaxConnections)
	switch {
	case l.connsGeneral < general && (perSource <= 0 || l.connSources[dc.source] < perSource):
		l.connsGeneral++
	case l.connsReserved < connReserve(l.limits.MaxConnections):
		dc.reserved = true
		l.connsReserved++
	default:
		return nil, false
	}
	l.connSources[dc.source]++
	return dc, true
}

func (l *Limiter) releaseConn(c *doorConn) {
	if l.limits.MaxConnections <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.reserved {
		l.connsReserved--
	} else {
		l.connsGeneral--
	}
	if l.connSources[c.source]--; l.connSources[c.source] <= 0 {
		delete(l.connSources, c.source)
	}
}

// sourceOf is the IP of a remote address, or the address itself.
func sourceOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return host
}

// connOf is the doorConn under c (a *tls.Conn or the doorConn itself).
func connOf(c net.Conn) *doorConn {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	dc, _ := c.(*doorConn)
	return dc
}

type connKey struct{}

// ConnContext records the request's connection (http.Server.ConnContext).
func (l *Limiter) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if dc := connOf(c); dc != nil {
		return context.WithValue(ctx, connKey{}, dc)
	}
	return ctx
}

func connFrom(ctx context.Context) *doorConn {
	dc, _ := ctx.Value(connKey{}).(*doorConn)
	return dc
}

// ConnState closes a connection that stays idle for
// unauthenticatedIdleTimeout before carrying an authenticated request
// (http.Server.ConnState).
func (l *Limiter) ConnState(c net.Conn, s http.ConnState) {
	dc := connOf(c)
	if dc == nil {
		return
	}
	switch s {
	case http.StateIdle:
		if dc.authenticated.Load() {
			return
		}
		dc.mu.Lock()
		defer dc.mu.Unlock()
		if dc.idle == nil {
			dc.idle = l.clock.AfterFunc(unauthenticatedIdleTimeout, func() {
				dc.mu.Lock()
				dc.idle = nil // fired: nothing to stop
				dc.mu.Unlock()
				_ = c.Close()
			})
		}
	default:
		dc.stopIdle()
	}
}
