package readcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// maxBody bounds a stored answer (bytes); larger ones pass through
// unstored.
const maxBody = 1 << 20

// keyPrefix starts every stored answer's key.
const keyPrefix = "getonly/"

// Prefix starts the key of every stored answer.
const Prefix = keyPrefix

// getOnlyPaths match the single-object paths of the kinds a node may get
// but not list (Node authorizer, Kubernetes v1.36).
var getOnlyPaths = []*regexp.Regexp{
	regexp.MustCompile(`^/api/v1/namespaces/[^/]+/persistentvolumeclaims/[^/]+$`),
	regexp.MustCompile(`^/api/v1/persistentvolumes/[^/]+$`),
	regexp.MustCompile(`^/apis/coordination\.k8s\.io/v1/namespaces/kube-node-lease/leases/[^/]+$`),
	regexp.MustCompile(`^/apis/storage\.k8s\.io/v1/csinodes/[^/]+$`),
	regexp.MustCompile(`^/apis/storage\.k8s\.io/v1/volumeattachments/[^/]+$`),
}

// Store keeps answers durably. Lookup returns ok false for a key never
// stored; Delete of such a key is not an error.
type Store interface {
	Put(ctx context.Context, key string, value []byte) error
	Lookup(ctx context.Context, key string) (value []byte, ok bool, err error)
	Delete(ctx context.Context, key string) error
}

// Config wires the wrapper. Logger may be nil.
type Config struct {
	Store     Store
	Connected func() bool
	Logger    *slog.Logger
}

type entry struct {
	ContentType string `json:"contentType"`
	Body        []byte `json:"body"`
}

// Wrap returns next with GETs of get-only kinds stored and served offline.
func Wrap(next http.Handler, cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.RawQuery != "" || !getOnly(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key := storeKey(r.URL.Path, r.Header.Get("Accept"))
		if !cfg.Connected() {
			if !replay(w, r.Context(), cfg.Store, key) {
				next.ServeHTTP(w, r)
			}
			return
		}
		rec := &response.Recorder{ResponseWriter: w, Limit: maxBody}
		next.ServeHTTP(rec, r)
		if err := keep(r.Context(), cfg.Store, key, rec); err != nil {
			cfg.Logger.Warn("get-only answer not stored", "path", r.URL.Path, "err", err)
		}
	})
}

func getOnly(path string) bool {
	for _, re := range getOnlyPaths {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// storeKey names the answer to path in the media type accept asked for.
func storeKey(path, accept string) string {
	h := sha256.Sum256([]byte(accept))
	return keyPrefix + path + "#" + hex.EncodeToString(h[:8])
}

// keep stores a 200 answer and forgets the object on a 403 or 404.
func keep(ctx context.Context, s Store, key string, rec *response.Recorder) error {
	switch {
	case rec.Status == http.StatusForbidden || rec.Status == http.StatusNotFound:
		return s.Delete(ctx, key)
	case rec.Status != http.StatusOK || rec.Overflow:
		return nil
	}
	raw, err := json.Marshal(entry{ContentType: rec.Header().Get("Content-Type"), Body: rec.Body()})
	if err != nil {
		return err
	}
	return s.Put(ctx, key, raw)
}

func replay(w http.ResponseWriter, ctx context.Context, s Store, key string) bool {
	raw, ok, err := s.Lookup(ctx, key)
	if err != nil || !ok {
		return false
	}
	var e entry
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	w.Header().Set("Content-Type", e.ContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(e.Body)
	return true
}
