//go:build e2e

package framework

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// linkProxy forwards TCP connections from a loopback port to
// kube-apiserver. While cut, it closes every forwarded connection and every
// new one at once (like an RST), so apiserver-lite sees the cloud vanish
// while the admin, which connects directly, keeps writing. While
// black-holed, it accepts connections but holds every byte in either
// direction, as a link that silently drops packets does to TCP: nothing
// arrives and nothing fails until the link works again, when the held
// bytes flow (TCP's retransmissions). TLS passes through unchanged.
type linkProxy struct {
	ln     net.Listener // immutable
	target string       // immutable: kube-apiserver's host:port
	wg     sync.WaitGroup

	// sent and received count the bytes forwarded to and from the cloud,
	// TLS records included.
	sent, received atomic.Int64
	// accepted holds when each connection was accepted: each is a TLS
	// handshake the cloud made. Guarded by mu.
	accepted []time.Time

	mu sync.Mutex
	// cut is true between CutLink and RestoreLink. Guarded by mu.
	cut bool
	// conns holds both ends of every forwarded connection, each with the
	// pair's stale flag (see DropLinkState). Guarded by mu.
	conns map[net.Conn]*atomic.Bool
	// flowing is closed while bytes may pass; BlackHoleLink replaces it
	// with an open one and RestoreLink closes that. Guarded by mu.
	flowing chan struct{}
	// closed is closed when the proxy closes. Immutable.
	closed chan struct{}
}

// startLink starts the edge's link proxy and points apiserver-lite's cloud
// kubeconfig at it. The proxy is closed when the test ends.
func (c *Cluster) startLink() {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatalf("listen for edge link: %v", err)
	}
	flowing := make(chan struct{})
	close(flowing)
	c.link = &linkProxy{ln: ln, target: loopback(c.cloudPort), conns: map[net.Conn]*atomic.Bool{},
		flowing: flowing, closed: make(chan struct{})}
	c.t.Cleanup(c.link.close)
	c.link.wg.Add(1)
	go c.link.serve()
	if err := writeKubeconfig(c.EdgeCloudKubeconfig, "https://"+ln.Addr().String(), c.pki.CAPEM, &c.pki.edge); err != nil {
		c.t.Fatalf("%v", err)
	}
}

// CutLink cuts apiserver-lite off the cloud: open connections are closed
// and new ones are closed as soon as they are accepted. It needs
// Options.EdgeLink.
func (c *Cluster) CutLink() {
	c.t.Helper()
	l := c.mustLink()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for conn := range l.conns {
		conn.Close()
	}
}

// BlackHoleLink makes the link drop packets silently: connections stay
// open, and new ones are accepted, but no byte passes until RestoreLink.
// It needs Options.EdgeLink.
func (c *Cluster) BlackHoleLink() {
	c.t.Helper()
	l := c.mustLink()
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.flowing:
		l.flowing = make(chan struct{})
	default: // black-holed already
	}
}

// RestoreLink lets apiserver-lite reach the cloud again after CutLink or
// BlackHoleLink; bytes held by a black hole are delivered.
func (c *Cluster) RestoreLink() {
	c.t.Helper()
	l := c.mustLink()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
	l.restoreFlowLocked()
}

// DropLinkState ends a black hole as a NAT or middlebox that dropped its
// connection state does: new connections flow again, but every connection
// open now stays silent for good, neither delivering nor failing. It needs
// Options.EdgeLink.
func (c *Cluster) DropLinkState() {
	c.t.Helper()
	l := c.mustLink()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, stale := range l.conns {
		stale.Store(true)
	}
	l.cut = false
	l.restoreFlowLocked()
}

// restoreFlowLocked ends a black hole. mu must be held.
func (l *linkProxy) restoreFlowLocked() {
	select {
	case <-l.flowing:
	default:
		close(l.flowing)
	}
}

func (c *Cluster) mustLink() *linkProxy {
	c.t.Helper()
	if c.link == nil {
		c.t.Fatalf("edge link: Options.EdgeLink is not set")
	}
	return c.link
}

// serve accepts connections until the listener is closed.
func (l *linkProxy) serve() {
	defer l.wg.Done()
	for {
		conn, err := l.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		l.mu.Lock()
		l.accepted = append(l.accepted, time.Now())
		l.mu.Unlock()
		l.wg.Add(1)
		go l.forward(conn)
	}
}

// forward copies bytes both ways between conn and the target until either
// side closes or the link is cut.
func (l *linkProxy) forward(conn net.Conn) {
	defer l.wg.Done()
	defer conn.Close()
	up, err := net.Dial("tcp", l.target)
	if err != nil {
		return
	}
	defer up.Close()
	stale := &atomic.Bool{}
	if !l.track(stale, conn, up) {
		return
	}
	defer l.untrack(conn, up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, n *atomic.Int64) {
		l.copy(dst, src, n, stale)
		// Closing both ends ends the other direction too.
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, conn, &l.sent)
	go pipe(conn, up, &l.received)
	<-done
	<-done
}

// copyBufSize is the proxy's per-direction read buffer, in bytes.
const copyBufSize = 32 << 10

// copy forwards src to dst until either fails, holding each read while the
// link is black-holed, and for good once the pair is stale.
func (l *linkProxy) copy(dst, src net.Conn, count *atomic.Int64, stale *atomic.Bool) {
	buf := make([]byte, copyBufSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !l.waitFlowing() {
				return
			}
			if stale.Load() {
				<-l.closed
				return
			}
			w, werr := dst.Write(buf[:n])
			count.Add(int64(w))
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// waitFlowing waits while the link is black-holed; false means the proxy
// closed.
func (l *linkProxy) waitFlowing() bool {
	l.mu.Lock()
	flowing := l.flowing
	l.mu.Unlock()
	select {
	case <-flowing:
		return true
	case <-l.closed:
		return false
	}
}

// LinkAccepts returns when each of apiserver-lite's connections to the
// cloud was accepted since since, oldest first: each cost the cloud a TLS
// handshake. It needs Options.EdgeLink.
func (c *Cluster) LinkAccepts(since time.Time) []time.Time {
	l := c.mustLink()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for _, at := range l.accepted {
		if !at.Before(since) {
			out = append(out, at)
		}
	}
	return out
}

// LinkBytes returns the bytes apiserver-lite sent to and received from the
// cloud through the link proxy so far. It needs Options.EdgeLink.
func (c *Cluster) LinkBytes() (sent, received int64) {
	c.t.Helper()
	l := c.mustLink()
	return l.sent.Load(), l.received.Load()
}

// track registers a forwarded pair with its stale flag, or reports false
// if the link is cut.
func (l *linkProxy) track(stale *atomic.Bool, conns ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return false
	}
	for _, c := range conns {
		l.conns[c] = stale
	}
	return true
}

func (l *linkProxy) untrack(conns ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range conns {
		delete(l.conns, c)
	}
}

// close stops accepting, closes every forwarded connection and waits for
// the forwarding goroutines.
func (l *linkProxy) close() {
	l.ln.Close()
	close(l.closed)
	l.mu.Lock()
	l.cut = true
	for conn := range l.conns {
		conn.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
