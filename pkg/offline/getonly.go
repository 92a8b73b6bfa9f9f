package offline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/negotiate"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

const (
	// maxGetOnlyBody bounds one stored answer, decoded (bytes); larger
	// ones pass through unstored.
	maxGetOnlyBody = 1 << 20
	// DefaultMaxGetOnlyAnswers bounds how many get-only answers are
	// stored: a node reads its own Lease and CSINode and the PVCs, PVs
	// and VolumeAttachments of its pods' volumes, in one or two media
	// types, well under this.
	DefaultMaxGetOnlyAnswers = 512
	// DefaultMaxGetOnlyBytes bounds the stored get-only answers' bytes
	// together.
	DefaultMaxGetOnlyBytes = 32 << 20
	// getOnlyRetention is how long a stored answer no read refreshed is
	// kept: the kubelet reads a PVC at every mount of its volume and its
	// Lease at every renewal, so an answer unread for a month belongs to
	// an object the node no longer uses.
	getOnlyRetention = 30 * 24 * time.Hour
	// maxGetOnlyPath bounds the path of a stored answer (bytes): object
	// names are at most 253 bytes.
	maxGetOnlyPath = 1024
	// headerContentEncoding names the encoding of a body.
	headerContentEncoding = "Content-Encoding"
	// queryTimeout is the request parameter bounding the server's work,
	// which does not change the answer.
	queryTimeout = "timeout"
	// fullLogInterval spaces the log lines saying the caps are reached.
	fullLogInterval = time.Minute
)

// errGetOnlyFull is returned when an answer would exceed the caps.
var errGetOnlyFull = errors.New("the get-only answers' caps are reached")

// getOnlyPaths match the single-object paths of the kinds a node may get
// but not list (Node authorizer, Kubernetes v1.36).
var getOnlyPaths = []*regexp.Regexp{
	regexp.MustCompile(`^/api/v1/namespaces/[^/]+/persistentvolumeclaims/[^/]+$`),
	regexp.MustCompile(`^/api/v1/persistentvolumes/[^/]+$`),
	regexp.MustCompile(`^/apis/coordination\.k8s\.io/v1/namespaces/kube-node-lease/leases/[^/]+$`),
	regexp.MustCompile(`^/apis/storage\.k8s\.io/v1/csinodes/[^/]+$`),
	regexp.MustCompile(`^/apis/storage\.k8s\.io/v1/volumeattachments/[^/]+$`),
}

// GetOnlyConfig wires WrapGetOnly. Clock and Logger may be nil; without
// FromNode nothing is stored.
type GetOnlyConfig struct {
	Store     Store
	Connected func() bool
	// FromNode reports whether a request carries this node's own
	// identity: only its answers are stored and replayed.
	FromNode func(*http.Request) bool
	// MaxAnswers and MaxBytes cap the stored answers; 0 is the default.
	MaxAnswers int
	MaxBytes   int64
	Clock      clock.PassiveClock
	Logger     *slog.Logger
}

// getOnlyEntry is one stored answer, its body decoded.
type getOnlyEntry struct {
	ContentType string    `json:"contentType"`
	Body        []byte    `json:"body"`
	StoredAt    time.Time `json:"storedAt"`
	// Node marks an answer stored under the rule that only the node's are;
	// one without it is from before the rule, and is pruned.
	Node bool `json:"node"`
}

func newGetOnlyMemo(store Store, log *slog.Logger) *Memo[getOnlyEntry] {
	return NewMemo(Policy[getOnlyEntry]{Prefix: GetOnlyPrefix, Store: store, Grace: getOnlyRetention,
		What: "get-only answer", Logger: log,
		Times: func(e getOnlyEntry) (time.Time, time.Time) { return e.StoredAt, time.Time{} },
		Valid: func(e getOnlyEntry) bool { return e.Node && !e.StoredAt.IsZero() }})
}

// WrapGetOnly returns next with the node's GETs of get-only kinds stored
// while online and replayed offline. Online, a 200 answer is stored (a
// gzip body decoded) under the path and the negotiated media type, and a
// 403 or 404 removes the stored copy. Other callers' GETs pass through.
func WrapGetOnly(next http.Handler, cfg GetOnlyConfig) http.Handler {
	g := newGetOnly(cfg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := g.key(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if !cfg.Connected() {
			if !g.replay(w, r.Context(), key) {
				next.ServeHTTP(w, r)
			}
			return
		}
		rec := &response.Recorder{ResponseWriter: w, Limit: maxGetOnlyBody}
		next.ServeHTTP(rec, r)
		if err := g.keep(r.Context(), key, rec); err != nil {
			g.logNotStored(r.URL.Path, err)
		}
	})
}

type getOnly struct {
	cfg  GetOnlyConfig
	memo *Memo[getOnlyEntry]
	// fullLogged is when the caps were last logged (Unix nanoseconds).
	fullLogged atomic.Int64
}

// logNotStored logs a failure to store an answer; a full store at most
// once per fullLogInterval.
func (g *getOnly) logNotStored(path string, err error) {
	if errors.Is(err, errGetOnlyFull) {
		now, last := g.cfg.Clock.Now().UnixNano(), g.fullLogged.Load()
		if now-last < int64(fullLogInterval) || !g.fullLogged.CompareAndSwap(last, now) {
			return
		}
	}
	g.cfg.Logger.Warn("get-only answer not stored", "path", path, "err", err)
}

func newGetOnly(cfg GetOnlyConfig) *getOnly {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxAnswers <= 0 {
		cfg.MaxAnswers = DefaultMaxGetOnlyAnswers
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxGetOnlyBytes
	}
	return &getOnly{cfg: cfg, memo: newGetOnlyMemo(cfg.Store, cfg.Logger)}
}

// key names r's answer: its path and negotiated media type. ok is false
// for a request whose answer is not stored: not the node's, not a plain
// GET of a get-only kind, or converted (Table, metadata only). Updates
// are not stored: a kubelet renews its Lease every 10 s, and a write to
// the node's disk at each renewal would cost more than the one conflict a
// replayed Lease causes once online (the kubelet then reads it again).
func (g *getOnly) key(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet || !plainQuery(r.URL.Query()) ||
		len(r.URL.Path) > maxGetOnlyPath || !isGetOnly(r.URL.Path) ||
		g.cfg.FromNode == nil || !g.cfg.FromNode(r) {
		return "", false
	}
	resp, err := negotiate.Resource(r, true, false)
	if err != nil || resp.Table() != nil || resp.Partial() != nil {
		return "", false
	}
	return r.URL.Path + "#" + resp.MediaType(), true
}

// plainQuery reports whether q changes nothing in the answer: empty, or
// only the server-side timeout that client-go adds for a client with a
// timeout (the kubelet's Lease client: GET ...?timeout=10s).
func plainQuery(q url.Values) bool {
	for k := range q {
		if k != queryTimeout {
			return false
		}
	}
	return true
}

func isGetOnly(path string) bool {
	for _, re := range getOnlyPaths {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// keep stores a 200 answer within the caps and forgets the object on a
// 403 or 404.
func (g *getOnly) keep(ctx context.Context, key string, rec *response.Recorder) error {
	switch {
	case rec.Status == http.StatusForbidden || rec.Status == http.StatusNotFound:
		return g.cfg.Store.Delete(ctx, GetOnlyPrefix+key)
	case rec.Status != http.StatusOK || rec.Overflow:
		return nil
	}
	body, err := decoded(rec.Header().Get(headerContentEncoding), rec.Body())
	if err != nil {
		return err
	}
	e := getOnlyEntry{ContentType: rec.Header().Get("Content-Type"), Body: body, StoredAt: g.cfg.Clock.Now(), Node: true}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := g.fits(ctx, key, len(raw)); err != nil {
		return err
	}
	return g.cfg.Store.Put(ctx, GetOnlyPrefix+key, raw)
}

// decoded is body without its content encoding: identity, or gzip within
// maxGetOnlyBody.
func decoded(encoding string, body []byte) ([]byte, error) {
	switch encoding {
	case "":
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxGetOnlyBody+1))
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		if len(out) > maxGetOnlyBody {
			return nil, fmt.Errorf("gzip body over %d bytes decoded", maxGetOnlyBody)
		}
		return out, nil
	}
	return nil, fmt.Errorf("content encoding %q", encoding)
}

// fits reports whether an answer of size bytes may be stored at key: a
// refresh within the bytes cap, or a new answer within both caps. Two
// answers stored at once may both fit and pass a cap by one answer; the
// doors' in-flight limits bound how many.
func (g *getOnly) fits(ctx context.Context, key string, size int) error {
	use, err := g.cfg.Store.MetaUsage(ctx, GetOnlyPrefix)
	if err != nil {
		return err
	}
	old, ok, err := g.cfg.Store.Get(ctx, GetOnlyPrefix+key)
	if err != nil {
		return err
	}
	if ok {
		use.Count--
		use.Bytes -= int64(len(old))
	}
	if use.Count+1 > g.cfg.MaxAnswers || use.Bytes+int64(size) > g.cfg.MaxBytes {
		return fmt.Errorf("%w (%d answers, %d bytes)", errGetOnlyFull, g.cfg.MaxAnswers, g.cfg.MaxBytes)
	}
	return nil
}

// replay answers from the store; false when nothing usable is stored.
func (g *getOnly) replay(w http.ResponseWriter, ctx context.Context, key string) bool {
	e, ok := g.memo.Stored(ctx, key)
	if !ok || !g.memo.InGrace(e, g.cfg.Clock.Now()) {
		return false
	}
	w.Header().Set("Content-Type", e.ContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(e.Body)
	return true
}
