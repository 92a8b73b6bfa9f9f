package door

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recorder is the wrapped local API: it counts calls and keeps the
// forwarding decision it was given.
type recorder struct {
	calls atomic.Int32
	rt    http.RoundTripper
	err   error
}

func (h *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	h.rt, h.err = caller.ForwardTransport(r.Context())
	w.WriteHeader(http.StatusOK)
}

func secureRig(t *testing.T) (*fakeCloud, *recorder, http.Handler) {
	cloud := newFakeCloud(t)
	cloud.setToken("good", &authenticationv1.UserInfo{Username: "system:serviceaccount:a:sa"})
	cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
		ra := s.ResourceAttributes
		return ra != nil && ra.Resource == "configmaps" && ra.Namespace == "a"
	}
	fwd, err := NewForwarder(cloud.config())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	h := Secure(rec, SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{NodeName: "n1", Reviews: cloud.tokenClient(t)}),
		Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
		Forwarder:     fwd,
	})
	return cloud, rec, h
}

func TestSecureDoor(t *testing.T) {
	nodeCert := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}
	otherCert := &x509.Certificate{Subject: pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}}
	for _, tc := range []struct {
		name, method, path, token string
		impersonate               string
		cert                      *x509.Certificate
		wantCode                  int
		wantReached               bool
		wantForward               string // "daemon", "caller" or "none"
	}{
		{name: "no credentials", method: "GET", path: "/api/v1/namespaces/a/configmaps/c", wantCode: 401},
		{name: "forged token", method: "GET", path: "/api/v1/namespaces/a/configmaps/c", token: "forged", wantCode: 401},
		{name: "allowed token", method: "GET", path: "/api/v1/namespaces/a/configmaps/c", token: "good",
			wantCode: 200, wantReached: true, wantForward: "caller"},
		{name: "denied token", method: "GET", path: "/api/v1/namespaces/a/secrets/s", token: "good", wantCode: 403},
		{name: "health anonymous", method: "GET", path: "/readyz", wantCode: 200, wantReached: true, wantForward: "none"},
		{name: "health details anonymous", method: "GET", path: "/readyz?verbose", wantCode: 401},
		{name: "health check anonymous", method: "GET", path: "/readyz/ping", wantCode: 401},
		{name: "metrics anonymous", method: "GET", path: "/metrics", wantCode: 401},
		{name: "health details denied token", method: "GET", path: "/livez?verbose", token: "good", wantCode: 403},
		{name: "health details node", method: "GET", path: "/readyz?verbose", cert: nodeCert,
			wantCode: 200, wantReached: true, wantForward: "daemon"},
		{name: "node certificate", method: "GET", path: "/api/v1/namespaces/a/secrets/s", cert: nodeCert,
			wantCode: 200, wantReached: true, wantForward: "daemon"},
		{name: "node metrics never forwarded", method: "GET", path: "/metrics", cert: nodeCert, wantCode: 404},
		{name: "pprof never forwarded", method: "GET", path: "/debug/pprof/heap", cert: nodeCert, wantCode: 404},
		{name: "impersonation", method: "GET", path: "/api/v1/namespaces/a/configmaps/c", token: "good",
			impersonate: "system:admin", wantCode: 403},
		{name: "other certificate write", method: "POST", path: "/api/v1/namespaces/a/configmaps", cert: otherCert,
			wantCode: 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloud, rec, h := secureRig(t)
			cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
				ra := s.ResourceAttributes
				return ra != nil && ra.Resource == "configmaps" && ra.Namespace == "a"
			}
			r := httptest.NewRequest(tc.method, "https://10.0.0.1:10551"+tc.path, nil)
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.impersonate != "" {
				r.Header.Set("Impersonate-User", tc.impersonate)
			}
			if tc.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert},
					VerifiedChains: [][]*x509.Certificate{{tc.cert}}}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantCode {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, tc.wantCode)
			}
			if reached := rec.calls.Load() > 0; reached != tc.wantReached {
				t.Fatalf("got handler reached %v, want %v", reached, tc.wantReached)
			}
			if w.Code >= 400 {
				checkStatusBody(t, w)
			}
			if !tc.wantReached {
				return
			}
			got := "daemon"
			if rec.rt != nil {
				got = "caller"
			} else if rec.err != nil {
				got = "none"
			}
			if got != tc.wantForward {
				t.Fatalf("got forwarding %s, want %s", got, tc.wantForward)
			}
		})
	}
}

func TestSecureDoorOtherCertificateRead(t *testing.T) {
	cloud, rec, h := secureRig(t)
	cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "admin"}}
	r := httptest.NewRequest("GET", "https://10.0.0.1/api/v1/pods", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}, VerifiedChains: [][]*x509.Certificate{{cert}}}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || !errors.Is(rec.err, caller.ErrNotForwardable) || rec.rt != nil {
		t.Fatalf("got %d, forwarding %v/%v; want 200 served locally and not forwardable", w.Code, rec.rt, rec.err)
	}
}

func checkStatusBody(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != w.Code {
		t.Fatalf("got body %s, want a Status with code %d", w.Body, w.Code)
	}
}

func TestInsecureDoorHost(t *testing.T) {
	for _, tc := range []struct {
		host     string
		wantCode int
	}{
		{"127.0.0.1:10550", 200}, {"localhost:10550", 200}, {"LOCALHOST", 200}, {"[::1]:10550", 200},
		{"127.1.2.3", 200}, {"evil.example", 403}, {"evil.example:10550", 403}, {"10.0.0.1:10550", 403},
		{"localhost.evil.example", 403}, {"", 403},
	} {
		t.Run(tc.host, func(t *testing.T) {
			rec := &recorder{}
			r := httptest.NewRequest("GET", "http://x/api/v1/pods", nil)
			r.Host = tc.host
			w := httptest.NewRecorder()
			Insecure(rec, InsecureConfig{}).ServeHTTP(w, r)
			if w.Code != tc.wantCode || (rec.calls.Load() > 0) != (tc.wantCode == 200) {
				t.Fatalf("got %d (handler calls %d), want %d", w.Code, rec.calls.Load(), tc.wantCode)
			}
			if w.Code == 403 {
				checkStatusBody(t, w)
			}
		})
	}
}

func TestInsecureDoorOperations(t *testing.T) {
	rec := &recorder{}
	ops := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, tc := range []struct {
		path string
		ops  http.Handler
		want int
	}{{"/metrics", nil, 404}, {"/debug/pprof/", nil, 404}, {"/metrics", ops, http.StatusTeapot},
		{"/debug/pprof/heap", ops, http.StatusTeapot}} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:10550"+tc.path, nil)
		w := httptest.NewRecorder()
		Insecure(rec, InsecureConfig{Operations: tc.ops}).ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Fatalf("%s: got %d, want %d", tc.path, w.Code, tc.want)
		}
	}
	if rec.calls.Load() != 0 {
		t.Fatalf("got %d calls of the local API, want 0: operations paths are never forwarded", rec.calls.Load())
	}
}

func TestCheckListenAddress(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		remote  bool
		wantErr bool
	}{
		{"127.0.0.1:10550", false, false}, {"localhost:10550", false, false}, {"[::1]:1", false, false},
		{"", false, false}, {"0.0.0.0:10550", false, true}, {":10550", false, true}, {"10.0.0.1:10550", false, true},
		{"0.0.0.0:10550", true, false}, {"garbage", false, true},
	} {
		if err := CheckListenAddress(tc.addr, tc.remote); (err != nil) != tc.wantErr {
			t.Errorf("CheckListenAddress(%q, %v): got %v, want error %v", tc.addr, tc.remote, err, tc.wantErr)
		}
	}
}

// blocking is a local API whose requests wait until release is closed.
type blocking struct {
	started chan struct{}
	release chan struct{}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b.started <- struct{}{}
	<-b.release
	w.WriteHeader(http.StatusOK)
}

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits Limits
		path   string
	}{
		{name: "in-flight", limits: Limits{MaxRequestsInflight: 1}, path: "/api/v1/pods"},
		{name: "watches per client", limits: Limits{MaxWatchesPerClient: 1}, path: "/api/v1/pods?watch=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &blocking{started: make(chan struct{}, 1), release: make(chan struct{})}
			h := Insecure(b, InsecureConfig{Limiter: NewLimiter(tc.limits, LimiterConfig{})})
			done := make(chan int)
			go func() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+tc.path, nil))
				done <- w.Code
			}()
			<-b.started
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+tc.path, nil))
			if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
				t.Fatalf("got %d Retry-After %q, want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
			}
			checkStatusBody(t, w)
			close(b.release)
			if code := <-done; code != 200 {
				t.Fatalf("got %d for the first request, want 200", code)
			}
			b.release = make(chan struct{})
			close(b.release)
			w = httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+tc.path, nil))
			if w.Code != 200 {
				t.Fatalf("got %d after release, want 200", w.Code)
			}
		})
	}
}
