package door

import (
	"net/http"
	"net/http/httptest"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
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
	h := Insecure(b, InsecureConfig{Limiter: NewLimiter(Limits{MaxRequestsInflight: 1, MaxWatchesPerClient: 10})})
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

func TestFairShareOfInflight(t *testing.T) {
	cloud := newFakeCloud(t)
	for _, tok := range []string{"hog", "kubelet"} {
		cloud.setToken(tok, &authenticationv1.UserInfo{Username: tok})
	}
	cloud.allow = func(authorizationv1.SubjectAccessReviewSpec) bool { return true }
	b := &blocking{started: make(chan struct{}, 8), release: make(chan struct{})}
	h := Secure(b, SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{Reviews: cloud.tokenClient(t)}),
		Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
		Limiter:       NewLimiter(Limits{MaxRequestsInflight: 4}),
		Forwarder:     &Forwarder{},
	})
	req := func(token string) *http.Request {
		r := httptest.NewRequest("GET", "https://127.0.0.1/api/v1/pods", nil)
		r.RemoteAddr = "127.0.0.1:40000" // local callers: only the identity's share applies
		r.Header.Set("Authorization", "Bearer "+token)
		return r
	}
	held := []<-chan int{hold(t, h, b, req("hog")), hold(t, h, b, req("hog"))}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req("hog"))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("hog's third request: got %d, want 429 (its share is half the slots)", w.Code)
	}
	held = append(held, hold(t, h, b, req("kubelet")))
	close(b.release)
	for _, ch := range held {
		if code := <-ch; code != 200 {
			t.Fatalf("got %d, want 200", code)
		}
	}
}

func TestSourceShareBeforeAuthentication(t *testing.T) {
	b := &blocking{started: make(chan struct{}, 8), release: make(chan struct{})}
	h := Insecure(b, InsecureConfig{Limiter: NewLimiter(Limits{MaxRequestsInflight: 4})})
	from := func(addr string) *http.Request {
		r := httptest.NewRequest("GET", "http://127.0.0.1/api/v1/pods", nil)
		r.RemoteAddr = addr
		return r
	}
	held := []<-chan int{hold(t, h, b, from("10.1.0.5:1000")), hold(t, h, b, from("10.1.0.5:1001"))}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, from("10.1.0.5:1002"))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("third request from one pod address: got %d, want 429 (its share is half the slots)", w.Code)
	}
	held = append(held, hold(t, h, b, from("10.1.0.6:1000")), hold(t, h, b, from("127.0.0.1:2000")))
	close(b.release)
	for _, ch := range held {
		if code := <-ch; code != 200 {
			t.Fatalf("got %d, want 200", code)
		}
	}
}
