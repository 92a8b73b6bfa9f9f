package door

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

// hold serves req on h in the background until b releases it; it returns
// once the request reached b.
func hold(t *testing.T, h http.Handler, b *blocking, req *http.Request) <-chan int {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		done <- w.Code
	}()
	<-b.started
	return done
}

func TestLongRunningSkipsInflightCap(t *testing.T) {
	b := &blocking{started: make(chan struct{}, 8), release: make(chan struct{})}
	h := Insecure(b, InsecureConfig{Limiter: NewLimiter(Limits{MaxRequestsInflight: 1, MaxWatchesPerClient: 10}, LimiterConfig{})})
	var held []<-chan int
	for _, target := range []string{"/api/v1/pods?watch=yes", "/api/v1/pods?watch=t", "/api/v1/namespaces/a/pods/p/log?follow=true"} {
		held = append(held, hold(t, h, b, httptest.NewRequest("GET", "http://127.0.0.1"+target, nil)))
	}
	short := hold(t, h, b, httptest.NewRequest("GET", "http://127.0.0.1/api/v1/pods", nil))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/api/v1/pods", nil))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("second short request: got %d, want 429 (the watches took no slot, the first short one did)", w.Code)
	}
	close(b.release)
	for _, ch := range append(held, short) {
		if code := <-ch; code != 200 {
			t.Fatalf("got %d, want 200", code)
		}
	}
}

// laneRig is a secure door with 8 in-flight slots (2 reserved for node
// n1) whose cloud knows the tokens hog, other and third, allowing all.
func laneRig(t *testing.T) (*fakeCloud, *blocking, http.Handler) {
	cloud := newFakeCloud(t)
	for _, tok := range []string{"hog", "other", "third"} {
		cloud.setToken(tok, &authenticationv1.UserInfo{Username: tok})
	}
	cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	b := &blocking{started: make(chan struct{}, 16), release: make(chan struct{})}
	h := Secure(b, SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{NodeName: "n1", Reviews: cloud.tokenClient(t)}),
		Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
		Limiter:       NewLimiter(Limits{MaxRequestsInflight: 8}, LimiterConfig{NodeName: "n1"}),
		Forwarder:     &Forwarder{},
	})
	return cloud, b, h
}

func tokenRequest(token string) *http.Request {
	r := httptest.NewRequest("GET", "https://127.0.0.1/api/v1/pods", nil)
	r.RemoteAddr = "127.0.0.1:40000" // every caller shares loopback, as on a node
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

func nodeRequest(path string) *http.Request {
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}
	r := httptest.NewRequest("GET", "https://127.0.0.1"+path, nil)
	r.RemoteAddr = "127.0.0.1:40001"
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}, VerifiedChains: [][]*x509.Certificate{{cert}}}
	return r
}

func TestInflightLanes(t *testing.T) {
	_, b, h := laneRig(t)
	var held []<-chan int
	for range 3 { // hog's fair share: half of the 6 general slots
		held = append(held, hold(t, h, b, tokenRequest("hog")))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, tokenRequest("hog"))
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("hog's fourth request: got %d Retry-After %q, want 429 with Retry-After (its share is 3)", w.Code, w.Header().Get("Retry-After"))
	}
	for range 3 {
		held = append(held, hold(t, h, b, tokenRequest("other")))
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, tokenRequest("third"))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("a third identity with the general slots full: got %d, want 429 (the rest is the node's)", w.Code)
	}
	for range 2 { // the node's reserve
		held = append(held, hold(t, h, b, nodeRequest("/api/v1/pods")))
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, nodeRequest("/api/v1/pods"))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("the node past every slot: got %d, want 429", w.Code)
	}
	close(b.release)
	for _, ch := range held {
		if code := <-ch; code != 200 {
			t.Fatalf("got %d, want 200", code)
		}
	}
}

func TestUnauthorizedConnection(t *testing.T) {
	lim := NewLimiter(Limits{}, LimiterConfig{})
	h := Secure(http.NotFoundHandler(), SecureConfig{Authenticator: NewAuthenticator(AuthenticatorConfig{}), Limiter: lim})
	dc := &doorConn{lim: lim}
	send := func(proto int) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "https://127.0.0.1/api/v1/pods", nil)
		r.ProtoMajor = proto
		r = r.WithContext(lim.ConnContext(r.Context(), dc))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("got %d, want 401", w.Code)
		}
		return w
	}
	if got := send(1).Header().Get("Connection"); got != "close" {
		t.Fatalf("HTTP/1.1 401: got Connection %q, want close", got)
	}
	dc.unauthorized.Store(0)
	for i := 1; i < maxConsecutiveUnauthorized; i++ {
		if got := send(2).Header().Get("Connection"); got != "" {
			t.Fatalf("HTTP/2 401 number %d: got Connection %q, want none", i, got)
		}
	}
	if got := send(2).Header().Get("Connection"); got != "close" {
		t.Fatalf("HTTP/2 401 number %d: got Connection %q, want close (GOAWAY)", maxConsecutiveUnauthorized, got)
	}
}

func TestUnauthorizedCountStartsOverAfterSuccess(t *testing.T) {
	_, b, h := laneRig(t)
	close(b.release)
	lim := NewLimiter(Limits{}, LimiterConfig{})
	dc := &doorConn{lim: lim}
	dc.unauthorized.Store(maxConsecutiveUnauthorized - 1)
	r := tokenRequest("hog").WithContext(lim.ConnContext(tokenRequest("hog").Context(), dc))
	r.ProtoMajor = 2
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || dc.unauthorized.Load() != 0 || !dc.authenticated.Load() {
		t.Fatalf("got %d, 401 count %d, authenticated %v; want 200, 0, true", w.Code, dc.unauthorized.Load(), dc.authenticated.Load())
	}
}

func TestTokenReviewBudgetPerSource(t *testing.T) {
	cloud := newFakeCloud(t)
	cloud.setToken("pod", &authenticationv1.UserInfo{Username: "system:serviceaccount:a:pod"})
	cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	budget := NewReviewBudget(nil)
	h := Secure(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{Reviews: cloud.tokenClient(t), Budget: budget}),
		Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t), Budget: budget}),
		Forwarder:     &Forwarder{},
	})
	from := func(addr, token string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "https://10.0.0.1/api/v1/pods", nil)
		r.RemoteAddr = addr
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for i := range tokenReviewBurstPerSource {
		if w := from("10.1.0.5:1000", fmt.Sprintf("forged-%d", i)); w.Code != http.StatusUnauthorized {
			t.Fatalf("forged token %d within the budget: got %d, want 401", i, w.Code)
		}
	}
	w := from("10.1.0.5:1000", "forged-past")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("forged token past its source's budget: got %d Retry-After %q, want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if w := from("10.1.0.6:1000", "pod"); w.Code != http.StatusOK {
		t.Fatalf("another source's valid token: got %d %s, want 200", w.Code, w.Body)
	}
	if got, want := cloud.tokenReviews.Load(), int32(tokenReviewBurstPerSource+1); got != want {
		t.Fatalf("got %d token reviews, want %d", got, want)
	}
}

func TestAccessReviewBudgetPerIdentity(t *testing.T) {
	cloud := newFakeCloud(t)
	for _, tok := range []string{"lister", "quiet"} {
		cloud.setToken(tok, &authenticationv1.UserInfo{Username: tok})
	}
	cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	budget := NewReviewBudget(nil)
	h := Secure(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{Reviews: cloud.tokenClient(t)}),
		Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t), Budget: budget}),
		Forwarder:     &Forwarder{},
	})
	list := func(token, selector string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "https://10.0.0.1/api/v1/pods?labelSelector="+selector, nil)
		r.RemoteAddr = "10.1.0.5:1000"
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	terms := make([]string, 0, 10<<10)
	for i := range cap(terms) {
		terms = append(terms, fmt.Sprintf("k%d=v", i))
	}
	long := strings.Join(terms, ",") // about 100 KiB: left out of the review
	if w := list("lister", long); w.Code != http.StatusOK {
		t.Fatalf("a 100 KiB selector: got %d %s, want 200", w.Code, w.Body)
	}
	if sel := cloud.sarSpec().ResourceAttributes.LabelSelector; sel != nil {
		t.Fatalf("the review of a 100 KiB selector: got a selector of %d bytes, want none", len(sel.RawSelector))
	}
	mid := strings.Repeat("x", maxReviewedSelectorBytes-16)
	code := 0
	for i := 0; i < accessReviewBurstBytes/len(mid)+2 && code != http.StatusTooManyRequests; i++ {
		code = list("lister", fmt.Sprintf("k%d=%s", i, mid)).Code
	}
	if code != http.StatusTooManyRequests {
		t.Fatalf("distinct 4 KiB selectors past the identity's review bytes: got %d, want 429", code)
	}
	if w := list("quiet", "k=v"); w.Code != http.StatusOK {
		t.Fatalf("another identity: got %d %s, want 200", w.Code, w.Body)
	}
}

// sarSpec is the last SubjectAccessReview the cloud answered.
func (c *fakeCloud) sarSpec() authorizationv1.SubjectAccessReviewSpec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSAR
}

// impersonationSeen answers with the Impersonate-User its request would
// be forwarded with.
type impersonationSeen struct{}

func (impersonationSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"X-User": {r.Header.Get("Impersonate-User")}}, Body: http.NoBody}, nil
}

func TestClusterScopeNodeWritesAsNode(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		impersonate  bool
		want         string
	}{
		{name: "write as the node", method: "PATCH", impersonate: true, want: "system:node:n1"},
		{name: "read as the daemon", method: "GET", impersonate: true, want: ""},
		{name: "write as the daemon when asked", method: "PATCH", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloud := newFakeCloud(t)
			cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
			got := "unset"
			h := Secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				resp, err := caller.Transport(impersonationSeen{}).RoundTrip(r)
				if err != nil {
					t.Fatal(err)
				}
				got = resp.Header.Get("X-User")
			}), SecureConfig{
				Authenticator:   NewAuthenticator(AuthenticatorConfig{NodeName: "n1"}),
				Authorizer:      NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
				ClusterScope:    true,
				ImpersonateNode: tc.impersonate,
			})
			r := nodeRequest("/api/v1/nodes/n1/status")
			r.Method = tc.method
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tc.want {
				t.Fatalf("got Impersonate-User %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAnonymousHealthIsTerse(t *testing.T) {
	failing := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("[-]cloud-link failed: 10.0.0.1 unreachable\nreadyz check failed\n"))
	})
	h := Secure(failing, SecureConfig{Authenticator: NewAuthenticator(AuthenticatorConfig{NodeName: "n1"})})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "https://127.0.0.1/readyz", nil))
	if w.Code != http.StatusInternalServerError || w.Body.String() != "readyz check failed\n" {
		t.Fatalf("anonymous failing /readyz: got %d %q, want 500 %q", w.Code, w.Body, "readyz check failed\n")
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, nodeRequest("/readyz?verbose"))
	if !strings.Contains(w.Body.String(), "cloud-link failed") {
		t.Fatalf("the node's failing /readyz?verbose: got %q, want the checks", w.Body)
	}
}

func TestOneTokenCostsOneReviewOfItsBudget(t *testing.T) {
	const sends = 3 * tokenReviewBurstPerSource
	cloud := newFakeCloud(t)
	cloud.reviewGate = make(chan struct{}) // the one review waits until every send is in
	h := Secure(http.NotFoundHandler(), SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{Reviews: cloud.tokenClient(t), Budget: NewReviewBudget(nil)}),
	})
	codes := make(chan int, sends)
	for range sends {
		go func() {
			r := httptest.NewRequest("GET", "https://10.0.0.1/api/v1/pods", nil)
			r.RemoteAddr = "10.1.0.5:1000"
			r.Header.Set("Authorization", "Bearer forged")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			codes <- w.Code
		}()
	}
	for cloud.tokenReviews.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the other sends reach the shared review, or are refused
	close(cloud.reviewGate)
	for range sends {
		if code := <-codes; code != http.StatusUnauthorized {
			t.Fatalf("one forged token sent %d times at once: got %d, want 401 (one review, shared)", sends, code)
		}
	}
}

// Every 401 is reported to LimiterConfig.Unauthenticated; an anonymous
// health check is not a failed authentication.
func TestUnauthenticatedIsReported(t *testing.T) {
	var failed atomic.Int32
	lim := NewLimiter(Limits{}, LimiterConfig{Unauthenticated: func() { failed.Add(1) }})
	h := Secure(http.NotFoundHandler(), SecureConfig{Authenticator: NewAuthenticator(AuthenticatorConfig{}), Limiter: lim,
		Operations: http.NotFoundHandler()})
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/api/v1/pods", http.StatusUnauthorized},
		{"/livez", http.StatusNotFound},
		{"/metrics", http.StatusUnauthorized},
		{"/api/v1/namespaces/a/secrets/s", http.StatusUnauthorized},
	} {
		r := httptest.NewRequest("GET", "https://127.0.0.1"+tc.path, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Fatalf("%s: got %d, want %d", tc.path, w.Code, tc.code)
		}
	}
	if got := failed.Load(); got != 3 {
		t.Errorf("failed authentications reported: got %d, want 3", got)
	}
}
