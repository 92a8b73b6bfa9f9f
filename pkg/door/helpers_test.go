package door

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// fakeCloud answers TokenReviews and SubjectAccessReviews like a cloud
// kube-apiserver: tokens maps a valid token to its user; allow decides.
type fakeCloud struct {
	srv    *httptest.Server
	mu     sync.Mutex
	tokens map[string]authenticationv1.UserInfo // guarded by mu
	// audiences are the status.audiences of every authenticated review.
	audiences []string // guarded by mu
	allow     func(authorizationv1.SubjectAccessReviewSpec) bool
	lastSAR   authorizationv1.SubjectAccessReviewSpec // guarded by mu
	// reviewedFor are the spec.audiences of the last TokenReview.
	reviewedFor  []string // guarded by mu
	tokenReviews atomic.Int32
	sars         atomic.Int32
	// failWith, when set, is the HTTP status every review answers with.
	failWith atomic.Int32
	// reviewGate, when set, holds every TokenReview until it is closed.
	reviewGate chan struct{}
}

func newFakeCloud(t *testing.T) *fakeCloud {
	c := &fakeCloud{tokens: map[string]authenticationv1.UserInfo{},
		allow: func(authorizationv1.SubjectAccessReviewSpec) bool { return false }}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /apis/authentication.k8s.io/v1/tokenreviews", c.serveTokenReview)
	mux.HandleFunc("POST /apis/authorization.k8s.io/v1/subjectaccessreviews", c.serveSAR)
	c.srv = httptest.NewServer(mux)
	t.Cleanup(c.srv.Close)
	return c
}

func (c *fakeCloud) setToken(token string, u *authenticationv1.UserInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u == nil {
		delete(c.tokens, token)
		return
	}
	c.tokens[token] = *u
}

func (c *fakeCloud) serveTokenReview(w http.ResponseWriter, r *http.Request) {
	c.tokenReviews.Add(1)
	if c.reviewGate != nil {
		<-c.reviewGate
	}
	if c.failed(w) {
		return
	}
	var tr authenticationv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	u, ok := c.tokens[tr.Spec.Token]
	auds := c.audiences
	c.reviewedFor = tr.Spec.Audiences
	c.mu.Unlock()
	tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok, User: u}
	if ok {
		tr.Status.Audiences = auds
	}
	tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenReview"
	writeJSON(w, &tr)
}

// failed answers with failWith's status when it is set.
func (c *fakeCloud) failed(w http.ResponseWriter) bool {
	code := int(c.failWith.Load())
	if code == 0 {
		return false
	}
	w.Header().Set("Retry-After", "3")
	http.Error(w, http.StatusText(code), code)
	return true
}

func (c *fakeCloud) serveSAR(w http.ResponseWriter, r *http.Request) {
	c.sars.Add(1)
	if c.failed(w) {
		return
	}
	var sar authorizationv1.SubjectAccessReview
	if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.lastSAR = sar.Spec
	allow := c.allow
	c.mu.Unlock()
	sar.Status.Allowed = allow(sar.Spec)
	sar.APIVersion, sar.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	writeJSON(w, &sar)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(v)
}

func (c *fakeCloud) config() *rest.Config {
	return &rest.Config{Host: c.srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
}

func (c *fakeCloud) reviews(t *testing.T) ReviewClients {
	rc, err := NewReviewClients(c.config())
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func (c *fakeCloud) tokenClient(t *testing.T) authenticationclient.TokenReviewInterface {
	return c.reviews(t).Tokens
}

func (c *fakeCloud) sarClient(t *testing.T) authorizationclient.SubjectAccessReviewInterface {
	return c.reviews(t).Access
}

// memStore is an in-memory DecisionStore.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte // guarded by mu
}

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *memStore) Put(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = value
	return nil
}

func (s *memStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (s *memStore) PruneMeta(_ context.Context, prefix string, dead func([]byte) bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) && dead(v) {
			delete(s.m, k)
			n++
		}
	}
	return n, nil
}

func (s *memStore) MetaUsage(_ context.Context, prefix string) (metastore.MetaUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var u metastore.MetaUsage
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) {
			u.Count++
			u.Bytes += int64(len(v))
		}
	}
	return u, nil
}

// jwt is an unsigned JWT carrying claims.
func jwt(t testing.TB, claims map[string]any) string {
	raw, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc(raw) + "." + enc([]byte("signature"))
}

// boundClaims are the claims of a token bound to pod ns/name/uid.
func boundClaims(exp int64, ns, name, uid string) map[string]any {
	return map[string]any{"exp": exp, "kubernetes.io": map[string]any{
		"namespace": ns, "pod": map[string]any{"name": name, "uid": uid}}}
}

// switchable is a Connected that tests flip.
type switchable struct{ on atomic.Bool }

func (s *switchable) connected() bool { return s.on.Load() }
