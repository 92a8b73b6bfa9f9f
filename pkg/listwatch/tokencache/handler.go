package tokencache

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"io"
	"log/slog"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
)

// maxBody bounds the TokenRequest and answer bodies read into memory
// (bytes); both are well under a kilobyte in practice.
const maxBody = 64 << 10

// Store keeps answers durably. Lookup returns ok false for a key never
// stored.
type Store interface {
	Put(ctx context.Context, key string, value []byte) error
	Lookup(ctx context.Context, key string) (value []byte, ok bool, err error)
}

// Config wires the wrapper. Clock and Logger may be nil.
type Config struct {
	Store     Store
	Connected func() bool // the cloud-link state
	Clock     clock.PassiveClock
	Logger    *slog.Logger
}

// entry is one stored answer.
type entry struct {
	Expires     time.Time `json:"expires"`
	ContentType string    `json:"contentType"`
	Body        []byte    `json:"body"`
}

// Wrap returns next with TokenRequests answered from the store while the
// cloud is unreachable, and successful answers stored while it is.
func Wrap(next http.Handler, cfg Config) http.Handler {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := tokenPath.FindStringSubmatch(r.URL.Path)
		if r.Method != http.MethodPost || m == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			next.ServeHTTP(w, withBody(r, body))
			return
		}
		key, err := parseRequest(m[1], m[2], r.Header.Get("Accept"), body)
		if err != nil {
			next.ServeHTTP(w, withBody(r, body)) // the cloud answers it
			return
		}
		h := &handler{cfg: cfg, next: next}
		if cfg.Connected() {
			h.forward(w, withBody(r, body), key)
			return
		}
		if !h.replay(w, r.Context(), key) {
			next.ServeHTTP(w, withBody(r, body))
		}
	})
}

type handler struct {
	cfg  Config
	next http.Handler
}

func withBody(r *http.Request, body []byte) *http.Request {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

// forward lets next answer and stores a successful answer.
func (h *handler) forward(w http.ResponseWriter, r *http.Request, key requestKey) {
	rec := &response.Recorder{ResponseWriter: w, Limit: maxBody}
	h.next.ServeHTTP(rec, r)
	if rec.Status != http.StatusCreated || rec.Overflow {
		return
	}
	ct := rec.Header().Get("Content-Type")
	exp, err := expiration(rec.Body())
	if err != nil {
		h.cfg.Logger.Warn("token request answer not stored", "namespace", key.Namespace, "serviceAccount", key.ServiceAccount, "err", err)
		return
	}
	raw, err := json.Marshal(entry{Expires: exp, ContentType: ct, Body: rec.Body()})
	if err == nil {
		err = h.cfg.Store.Put(r.Context(), key.storeKey(), raw)
	}
	if err != nil {
		h.cfg.Logger.Warn("token request answer not stored", "namespace", key.Namespace, "serviceAccount", key.ServiceAccount, "err", err)
	}
}

// replay answers from the store; false when nothing unexpired is stored.
func (h *handler) replay(w http.ResponseWriter, ctx context.Context, key requestKey) bool {
	raw, ok, err := h.cfg.Store.Lookup(ctx, key.storeKey())
	if err != nil || !ok {
		return false
	}
	var e entry
	if json.Unmarshal(raw, &e) != nil || !h.cfg.Clock.Now().Before(e.Expires) {
		return false
	}
	w.Header().Set("Content-Type", e.ContentType)
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(e.Body)
	return true
}

// expiration reads status.expirationTimestamp of a TokenRequest answer.
func expiration(body []byte) (time.Time, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("decode answer: %w", err)
	}
	tr, ok := obj.(*authenticationv1.TokenRequest)
	if !ok || tr.Status.ExpirationTimestamp.IsZero() {
		return time.Time{}, errNotTokenRequest
	}
	return tr.Status.ExpirationTimestamp.Time, nil
}
