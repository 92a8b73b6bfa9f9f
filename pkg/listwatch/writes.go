package listwatch

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/proxy"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Read-your-writes: a write proxied to the cloud returns the object at RV
// X; a later get, list or WatchList with RV unset, from any local client,
// waits for the cache to reach X, so a client never reads its own write as
// stale while the sync is a moment behind.
const (
	// readYourWritesWait bounds that wait. After it the read is served from
	// the cache as it is: the sync is behind (or the cloud link is down),
	// and a stale answer beats none.
	readYourWritesWait = time.Second
)

// writeTargetKey is the context key under which serveProxy passes the cache
// a proxied write changes to observeWrite.
type writeTargetKey struct{}

// withWriteTarget returns r with the cache its write changes attached, or r
// itself when it is no write or changes no configured resource. A write to
// a subresource (pods/status) changes its parent resource.
func (s *server) withWriteTarget(r *http.Request) *http.Request {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return r
	}
	c := s.writeTarget(r.URL.Path)
	if c == nil {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), writeTargetKey{}, c))
}

// writeTarget returns the configured cache that a write to path changes, or
// nil.
func (s *server) writeTarget(path string) *versioncache.Cache {
	var gv schema.GroupVersion
	var rest string
	switch {
	case strings.HasPrefix(path, corePrefix):
		gv, rest = coreGroupVersion, strings.TrimPrefix(path, corePrefix)
	case strings.HasPrefix(path, groupPrefix):
		parts := strings.SplitN(strings.TrimPrefix(path, groupPrefix), "/", 3)
		if len(parts) < 3 {
			return nil
		}
		gv, rest = schema.GroupVersion{Group: parts[0], Version: parts[1]}, parts[2]
	default:
		return nil
	}
	parts := strings.Split(rest, "/")
	// namespaces/{ns}/{resource}/... unless {resource} is not configured:
	// then it is a subresource of namespace {ns} (namespaces/x/status).
	if len(parts) >= 3 && parts[0] == namespacesSegment {
		if c, ok := s.resources[gv.WithResource(parts[2])]; ok {
			return c
		}
	}
	return s.resources[gv.WithResource(parts[0])]
}

// observeWrite is the cloud proxy's ModifyResponse: for a successful write
// to a configured resource it records the resourceVersion of the returned
// object for read-your-writes. It never fails the response: a body it
// cannot read is passed on as it came.
func (s *server) observeWrite(resp *http.Response) error {
	c, ok := resp.Request.Context().Value(writeTargetKey{}).(*versioncache.Cache)
	if !ok {
		return nil
	}
	if rv, ok := proxy.WrittenRV(resp); ok {
		s.recordWrite(c, rv)
		if w := s.widened[c.GVR()]; w != nil {
			s.recordWrite(w, rv) // the same cloud resourceVersions
		}
	}
	return nil
}

// recordWrite raises c's read-your-writes floor to rv.
func (s *server) recordWrite(c *versioncache.Cache, rv uint64) {
	floor := s.written[c]
	for {
		cur := floor.Load()
		if cur >= rv || floor.CompareAndSwap(cur, rv) {
			return
		}
	}
}

// writtenRV returns the highest RV a proxied write to c returned (0 if
// none).
func (s *server) writtenRV(c *versioncache.Cache) uint64 {
	if floor := s.written[c]; floor != nil {
		return floor.Load()
	}
	return 0
}

// awaitWrites waits, at most readYourWritesWait on the server's clock or
// until ctx ends, for c to reach the RV of the latest proxied write to it.
// It never fails: when the wait ends first, the read is served as the
// cache is.
func (s *server) awaitWrites(ctx context.Context, c *versioncache.Cache) {
	rv := s.writtenRV(c)
	if rv == 0 || c.RV() >= rv {
		return
	}
	_, _ = s.waitForRV(ctx, c, rv, readYourWritesWait) // every outcome serves the cache as it is
}

// newWrittenFloors returns a zero read-your-writes floor per cache.
func newWrittenFloors(caches []*versioncache.Cache) map[*versioncache.Cache]*atomic.Uint64 {
	out := make(map[*versioncache.Cache]*atomic.Uint64, len(caches))
	for _, c := range caches {
		out[c] = new(atomic.Uint64)
	}
	return out
}

// serveProxy forwards a request to the cloud, or answers 503 when there is
// no cloud.
func (s *server) serveProxy(w http.ResponseWriter, r *http.Request) {
	if caller.NeverForwarded(r.URL.Path) {
		response.WriteError(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
		return
	}
	if !caller.CheckForwardable(w, r) {
		return // a caller the cloud cannot be asked for (403)
	}
	if s.cloud == nil {
		response.WriteError(w, response.CloudUnavailable())
		return
	}
	s.cloud.ServeHTTP(w, s.withWriteTarget(r))
}
