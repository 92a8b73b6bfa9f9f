//go:build e2e

package framework

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// linkProxy forwards TCP connections from a loopback port to
// kube-apiserver. While cut, it closes every forwarded connection and every
// new one at once, so apiserver-lite sees the cloud vanish while the admin,
// which connects directly, keeps writing. TLS passes through unchanged.
type linkProxy struct {
	ln     net.Listener // immutable
	target string       // immutable: kube-apiserver's host:port
	wg     sync.WaitGroup

	// sent and received count the bytes forwarded to and from the cloud,
	// TLS records included.
	sent, received atomic.Int64

	mu sync.Mutex
	// cut is true between CutLink and RestoreLink. Guarded by mu.
	cut bool
	// conns holds both ends of every forwarded connection. Guarded by mu.
	conns map[net.Conn]struct{}
}

// startLink starts the edge's link proxy and points apiserver-lite's cloud
// kubeconfig at it. The proxy is closed when the test ends.
func (c *Cluster) startLink() {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatalf("listen for edge link: %v", err)
	}
	c.link = &linkProxy{ln: ln, target: loopback(c.cloudPort), conns: map[net.Conn]struct{}{}}
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

// RestoreLink lets apiserver-lite reach the cloud again after CutLink.
func (c *Cluster) RestoreLink() {
	c.t.Helper()
	l := c.mustLink()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
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
	if !l.track(conn, up) {
		return
	}
	defer l.untrack(conn, up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, n *atomic.Int64) {
		_, _ = io.Copy(countingWriter{dst, n}, src)
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

// countingWriter adds the bytes it writes to n as they pass, so that
// long-lived watch connections are counted while they are open.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// LinkBytes returns the bytes apiserver-lite sent to and received from the
// cloud through the link proxy so far. It needs Options.EdgeLink.
func (c *Cluster) LinkBytes() (sent, received int64) {
	c.t.Helper()
	l := c.mustLink()
	return l.sent.Load(), l.received.Load()
}

// track registers a forwarded pair, or reports false if the link is cut.
func (l *linkProxy) track(conns ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return false
	}
	for _, c := range conns {
		l.conns[c] = struct{}{}
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
	l.mu.Lock()
	l.cut = true
	for conn := range l.conns {
		conn.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
