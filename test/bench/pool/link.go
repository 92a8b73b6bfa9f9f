//go:build e2e

package pool

import (
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// countingLink is one site member's link to the cloud: a TCP proxy on a
// loopback port that passes TLS through unchanged (kube-apiserver's
// certificate is still checked end to end) and counts the bytes of every
// connection each way. Each member gets its own, so the bytes are the
// member's, whatever identity it speaks with inside the TLS.
type countingLink struct {
	ln     net.Listener // immutable
	target string       // immutable: kube-apiserver's host:port
	wg     sync.WaitGroup

	mu sync.Mutex
	// conns are every connection forwarded so far, closed ones included.
	// Guarded by mu.
	conns []*linkConn
}

// linkConn is one forwarded connection's bytes: up to the cloud, down
// from it, and whether it is still open.
type linkConn struct {
	up, down atomic.Int64
	open     atomic.Bool
}

// linkCount is a link's bytes each way and open connections at one time.
type linkCount struct {
	up, down int64
	open     int
}

func (c linkCount) total() int64 { return c.up + c.down }

func (c linkCount) minus(o linkCount) linkCount {
	return linkCount{up: c.up - o.up, down: c.down - o.down, open: c.open}
}

// startCountingLink listens on a loopback port and forwards to target
// until the test ends.
func startCountingLink(t testing.TB, target string) *countingLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("counting link: %v", err)
	}
	l := &countingLink{ln: ln, target: target}
	l.wg.Add(1)
	go l.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		l.wg.Wait()
	})
	return l
}

// url is the https URL clients use instead of the cloud's.
func (l *countingLink) url() string { return "https://" + l.ln.Addr().String() }

func (l *countingLink) serve() {
	defer l.wg.Done()
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return
		}
		go l.forward(conn)
	}
}

// forward copies one connection both ways, counting, until either side
// closes.
func (l *countingLink) forward(client net.Conn) {
	cloud, err := net.Dial("tcp", l.target)
	if err != nil {
		_ = client.Close()
		return
	}
	c := &linkConn{}
	c.open.Store(true)
	l.mu.Lock()
	l.conns = append(l.conns, c)
	l.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, n *atomic.Int64) {
		_, _ = io.Copy(bench.CountingWriter{W: dst, N: n}, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(cloud, client, &c.up)
	go pipe(client, cloud, &c.down)
	<-done
	<-done
	c.open.Store(false)
}

// count sums every connection's bytes so far.
func (l *countingLink) count() linkCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s linkCount
	for _, c := range l.conns {
		s.up += c.up.Load()
		s.down += c.down.Load()
		if c.open.Load() {
			s.open++
		}
	}
	return s
}
