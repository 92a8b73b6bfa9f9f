package listwatch

import (
	"net/http"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// evictedWriteGrace bounds how long a watch's handler may stay blocked
// writing to its client once its watcher was evicted as too slow. The
// client must re-watch anyway; without the bound, a client that stopped
// reading pins the handler's goroutine and the kernel's send buffers (about
// 3 MiB per connection on loopback) until it goes away. A client that is
// merely slow gets this long to take the events queued before the
// eviction, and then a clean end of the stream.
const evictedWriteGrace = 10 * time.Second

// boundWritesAfterEviction arms a write deadline of s.evictedGrace on the
// stream's connection (or HTTP/2 stream) once watcher is evicted: a blocked
// write then fails and the connection is closed. The returned func must be
// called before the handler returns: net/http clears a connection's write
// deadline when a handler returns (an HTTP/2 stream's ends with the
// stream), and the join keeps a late eviction from arming one after that,
// on a kept-alive connection's next request.
func (s *server) boundWritesAfterEviction(rc *http.ResponseController, watcher *versioncache.Watcher) (disarm func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-watcher.EvictedC():
			// An error means the connection cannot take a deadline
			// (none of ours): the write then stays bounded by the client.
			_ = rc.SetWriteDeadline(s.clock.Now().Add(s.evictedGrace))
		case <-done:
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
