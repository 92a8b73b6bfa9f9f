package listwatch

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

const (
	// evictTestRing is the cache's ring; its watchers get the smallest
	// buffer (100 events).
	evictTestRing = 10
	// evictTestPadding is each configmap's payload, in bytes: loopback
	// socket buffers of a few MiB fill within a few hundred events.
	evictTestPadding = 64 << 10
	// evictTestMaxEvents bounds the events applied while waiting for the
	// eviction.
	evictTestMaxEvents = 2000
)

// evictFixture is a local API over one configmaps cache whose connections
// report when they close.
type evictFixture struct {
	cache  *versioncache.Cache
	srv    *httptest.Server
	rv     uint64
	closed chan struct{} // closed when the first connection closes
}

func newEvictFixture(t *testing.T, grace time.Duration) *evictFixture {
	t.Helper()
	f := &evictFixture{cache: versioncache.New(configMapsGVR, evictTestRing), rv: 1, closed: make(chan struct{})}
	f.cache.SetInfo(infos[configMapsGVR])
	f.cache.Replace(nil, f.rv)
	t.Cleanup(f.cache.Close)
	s, err := newServer(Config{Caches: []*versioncache.Cache{f.cache}})
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	s.evictedGrace = grace
	f.srv = httptest.NewUnstartedServer(s.routes())
	var once sync.Once
	f.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			once.Do(func() { close(f.closed) })
		}
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// dialSmallWindow connects with a 4 KiB receive buffer and sends a watch of
// the cache's configmaps from the current RV.
func (f *evictFixture) dialSmallWindow(t *testing.T) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", f.srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%d HTTP/1.1\r\nHost: local\r\n\r\n", f.rv)
	deadline := time.Now().Add(waitTimeout)
	for f.cache.Stats().Watchers == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the watch never registered")
		}
		time.Sleep(time.Millisecond)
	}
	return conn
}

// applyUntilEvicted applies large configmap updates until the cache evicts
// a watcher as too slow.
func (f *evictFixture) applyUntilEvicted(t *testing.T) {
	t.Helper()
	pad := strings.Repeat("x", evictTestPadding)
	for f.cache.Stats().TooSlow == 0 {
		if f.rv > evictTestMaxEvents {
			t.Fatalf("no eviction after %d events", evictTestMaxEvents)
		}
		f.rv++
		MustApply(t, f.cache, f.rv, watch.Modified, configMapJSON("default", "big", f.rv, map[string]string{"pad": pad}))
	}
}

// A client that stopped reading is disconnected once its watcher is
// evicted and the grace passes, freeing the handler and the kernel's send
// buffers, although it never reads again.
func TestEvictedWatchOfStalledClientIsClosed(t *testing.T) {
	f := newEvictFixture(t, 100*time.Millisecond)
	f.dialSmallWindow(t)
	f.applyUntilEvicted(t)
	select {
	case <-f.closed:
	case <-time.After(waitTimeout):
		t.Fatalf("connection still open %s after the eviction, want closed after the grace", waitTimeout)
	}
}

// A slow client that reads again within the grace gets the events queued
// before the eviction and a clean end, and its connection serves the next
// request after the grace: the deadline does not outlive the stream.
func TestEvictedWatchEndsCleanlyWithinGrace(t *testing.T) {
	const grace = 2 * time.Second
	f := newEvictFixture(t, grace)
	conn := f.dialSmallWindow(t)
	f.applyUntilEvicted(t)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read watch response: %v", err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		t.Fatalf("read watch stream: got %v after %d bytes, want a clean end", err, n)
	}
	time.Sleep(grace + grace/2)
	fmt.Fprintf(conn, "GET /api/v1/namespaces/default/configmaps/big HTTP/1.1\r\nHost: local\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("second request on the connection: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("second request: got %d, want 200", resp.StatusCode)
	}
}
