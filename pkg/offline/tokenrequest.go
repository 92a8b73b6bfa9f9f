package offline

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"k8s.io/utils/clock"
)

// maxBody bounds the TokenRequest and answer bodies read into memory
// (bytes); both are well under a kilobyte in practice.
const maxBody = 64 << 10

// TokenRequestConfig wires WrapTokenRequests. Clock and Logger may be nil; without FromNode
// or HeldPod nothing is stored.
type TokenRequestConfig struct {
	Store     Store
	Connected func() bool // the cloud-link state
	// FromNode reports whether a request was made with this node's own
	// identity (the kubelet), not a tenant's.
	FromNode func(*http.Request) bool
	// HeldPod reports whether the pod namespace/name with uid is held by
	// this node.
	HeldPod func(namespace, name, uid string) bool
	Clock   clock.PassiveClock
	Logger  *slog.Logger
}

// entry is one stored TokenRequest answer.
type entry struct {
	// Expires is when the token stops being accepted: the later of the
	// answer's status.expirationTimestamp and the JWT's exp claim.
	Expires     time.Time `json:"expires"`
	ContentType string    `json:"contentType"`
	Body        []byte    `json:"body"`
}

// WrapTokenRequests returns next with the kubelet's TokenRequests for its own pods
// stored when the cloud answers them 201, whatever the link state, and
// answered from the store when the cloud cannot be reached: at once while
// the link is down, else after a forward that fails with 503. Every other
// TokenRequest (a tenant's, or one not bound to a pod this node holds) is
// forwarded and never stored.
func WrapTokenRequests(next http.Handler, cfg TokenRequestConfig) http.Handler {
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
		h := &handler{cfg: cfg, next: next, memo: newTokenRequestMemo(cfg.Store, cfg.Logger)}
		if err != nil || !h.storable(r, key) {
			next.ServeHTTP(w, withBody(r, body)) // the cloud answers it
			return
		}
		if !cfg.Connected() && h.replay(w, r.Context(), key) {
			return
		}
		h.forward(w, withBody(r, body), key)
	})
}

type handler struct {
	cfg  TokenRequestConfig
	next http.Handler
	memo *Memo[entry]
}

// newTokenRequestMemo returns the memo of TokenRequest answers: stored
// only (the cloud is asked every time it can be), usable until the token
// expires.
func newTokenRequestMemo(store Store, log *slog.Logger) *Memo[entry] {
	return NewMemo(Policy[entry]{Prefix: TokenRequestPrefix, Store: store, What: "token request answer", Logger: log,
		Times: func(e entry) (time.Time, time.Time) { return time.Time{}, e.Expires }})
}

// storable reports whether an answer to r may be kept: the node's own
// request for a token bound to a pod it holds.
func (h *handler) storable(r *http.Request, key requestKey) bool {
	return key.BoundKind == "Pod" && key.BoundUID != "" && key.BoundName != "" &&
		h.cfg.FromNode != nil && h.cfg.FromNode(r) &&
		h.cfg.HeldPod != nil && h.cfg.HeldPod(key.Namespace, key.BoundName, key.BoundUID)
}

func withBody(r *http.Request, body []byte) *http.Request {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

// forward lets next answer, stores a 201 and, when the cloud cannot be
// reached (503), answers from the store if it can.
func (h *handler) forward(w http.ResponseWriter, r *http.Request, key requestKey) {
	buf := newBuffered()
	h.next.ServeHTTP(buf, r)
	switch {
	case buf.status == http.StatusCreated && !buf.overflow:
		h.store(r.Context(), key, buf)
	case buf.status == http.StatusServiceUnavailable && h.replay(w, r.Context(), key):
		return
	}
	buf.copyTo(w)
}

// store keeps a 201 answer until its token expires.
func (h *handler) store(ctx context.Context, key requestKey, buf *buffered) {
	exp, err := expiration(buf.body.Bytes())
	if err == nil {
		err = h.memo.put(ctx, key.storeKey(), entry{Expires: exp, ContentType: buf.header.Get("Content-Type"), Body: buf.body.Bytes()})
	}
	if err != nil {
		h.cfg.Logger.Warn("token request answer not stored", "namespace", key.Namespace, "serviceAccount", key.ServiceAccount, "err", err)
	}
}

// replay answers from the store; false when nothing unexpired is stored.
func (h *handler) replay(w http.ResponseWriter, ctx context.Context, key requestKey) bool {
	e, ok := h.memo.Stored(ctx, key.storeKey())
	if !ok || !h.memo.InGrace(e, h.cfg.Clock.Now()) {
		return false
	}
	w.Header().Set("Content-Type", e.ContentType)
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(e.Body)
	return true
}
