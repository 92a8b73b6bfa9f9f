package listwatch

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	// maxWriteResponseScan is the largest write response body (after
	// decompression) read to find its resourceVersion: etcd's default
	// request limit (1.5 MiB) plus room for the JSON envelope. Larger
	// bodies are passed through unread.
	maxWriteResponseScan = 2 << 20
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
// to a configured resource it reads the resourceVersion of the returned
// object and records it for read-your-writes. It never fails the response:
// a body it cannot read is passed on as it came.
func (s *server) observeWrite(resp *http.Response) error {
	c, ok := resp.Request.Context().Value(writeTargetKey{}).(*versioncache.Cache)
	if !ok || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || (mediaType != response.MediaTypeJSON && mediaType != response.MediaTypeProtobuf) {
		return nil
	}
	if resp.ContentLength > maxWriteResponseScan {
		return nil
	}
	body, complete, err := readBounded(resp.Body, maxWriteResponseScan)
	resp.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(body), resp.Body), Closer: resp.Body}
	if err != nil || !complete {
		return nil
	}
	if rv, ok := writtenObjectRV(body, mediaType, resp.Header.Get("Content-Encoding")); ok {
		s.recordWrite(c, rv)
	}
	return nil
}

// readBounded reads r up to limit bytes. complete reports that r ended
// within them; otherwise the bytes read so far are returned for replay.
func readBounded(r io.Reader, limit int64) (b []byte, complete bool, err error) {
	b, err = io.ReadAll(io.LimitReader(r, limit+1))
	return b, err == nil && int64(len(b)) <= limit, err
}

// writtenObjectRV returns metadata.resourceVersion of a JSON or protobuf
// write response, identity or gzip encoded. A Status (what some deletes
// return) carries none.
func writtenObjectRV(body []byte, mediaType, encoding string) (uint64, bool) {
	switch encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return 0, false
		}
		var complete bool
		if body, complete, err = readBounded(zr, maxWriteResponseScan); err != nil || !complete {
			return 0, false
		}
	default:
		return 0, false
	}
	var rv string
	if mediaType == response.MediaTypeProtobuf {
		rv = protobufRV(body)
	} else {
		rv = jsonRV(body)
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil && n > 0
}

// jsonRV returns metadata.resourceVersion of a JSON object, "" for a Status.
func jsonRV(body []byte) string {
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil || obj.Kind == statusKind {
		return ""
	}
	return obj.Metadata.ResourceVersion
}

// protobufMagic starts every Kubernetes protobuf body: "k8s\0", then a
// runtime.Unknown envelope around the object.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// protobufRV returns metadata.resourceVersion of a protobuf object, "" for
// a Status. Every built-in kind has its ObjectMeta as field 1, as
// PartialObjectMetadata does, whose decoder skips the other fields.
func protobufRV(body []byte) string {
	var u runtime.Unknown
	if !bytes.HasPrefix(body, protobufMagic) || u.Unmarshal(body[len(protobufMagic):]) != nil || u.Kind == statusKind {
		return ""
	}
	var m metav1.PartialObjectMetadata
	if err := m.Unmarshal(u.Raw); err != nil {
		return ""
	}
	return m.ResourceVersion
}

// statusKind is the kind of a metav1.Status body, which carries no object.
const statusKind = "Status"

// replayBody is a response body whose first bytes were already read: it
// reads them again, then the rest, and closes the original body.
type replayBody struct {
	io.Reader
	io.Closer
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
