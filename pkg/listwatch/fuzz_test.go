package listwatch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// FuzzRequest feeds random paths, queries and Accept headers to the local
// API. It must never panic (the recovery middleware would turn a panic into
// a 500, which fails here too) and every error must be a well-formed Status.
// The request context is already cancelled so watches and waits return at
// once; there is no cloud, so proxied requests answer 503.
func FuzzRequest(f *testing.F) {
	seeds := []struct{ method, path, query, accept string }{
		{"GET", "/api/v1/pods", "labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dnode-a", ""},
		{"GET", "/api/v1/namespaces/default/pods", "watch=true&resourceVersion=12&allowWatchBookmarks=true", "application/json"},
		{"GET", "/api/v1/namespaces/default/pods/web-1", "resourceVersion=abc", "application/vnd.kubernetes.protobuf"},
		{"GET", "/api/v1/pods", "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "*/*"},
		{"GET", "/api/v1/nodes", "resourceVersion=99&resourceVersionMatch=Exact&limit=5&continue=x", ""},
		{"GET", "/api/v1/namespaces/default", "", "text/html"},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a", "timeoutSeconds=-5&watch=true", ""},
		{"GET", "/apis", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"POST", "/api/v1/namespaces/default/pods", "", ""},
		{"GET", "/api/v1/pods", "fieldSelector=%3D%3D%3D&labelSelector=a+in+(((", ""},
		{"GET", "//api/v1/../pods/%2F", "timeoutSeconds=99999999999999999999", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.accept)
	}
	fx := newFixture(f)
	h, err := New(Config{Caches: fx.caches()})
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, method, path, query, accept string) {
		if !validMethod(method) {
			method = http.MethodGet
		}
		req := (&http.Request{
			Method:     method,
			URL:        &url.URL{Path: path, RawQuery: query},
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
			Header:     http.Header{"Accept": {accept}},
			Host:       "local",
		}).WithContext(ctx)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkAnswer(t, rec)
	})
}

func validMethod(m string) bool {
	return m != "" && !strings.ContainsAny(m, " \t\r\n") && strings.ToUpper(m) == m
}

// checkAnswer checks that an answer has a valid status code and that an
// error answer is a Status carrying that code.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 100 || rec.Code > 599 {
		t.Fatalf("got status %d, want a valid HTTP status", rec.Code)
	}
	if rec.Code == http.StatusInternalServerError && rec.Header().Get("Content-Type") == response.MediaTypeJSON {
		t.Fatalf("got 500 %s, want no internal error", rec.Body.String())
	}
	if rec.Code < 400 || rec.Header().Get("Content-Type") != response.MediaTypeJSON {
		return
	}
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("decode error body %q: %v", rec.Body.String(), err)
	}
	if st.Kind != "Status" || int(st.Code) != rec.Code {
		t.Fatalf("got %s with HTTP %d, want a Status with the same code", rec.Body.String(), rec.Code)
	}
}

func TestPanicsAnswer500(t *testing.T) {
	s := &server{log: discardLogger()}
	h := s.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
	r := reply{code: rec.Code, header: rec.Header(), body: rec.Body.String()}
	if st := MustStatus(t, r); r.code != http.StatusInternalServerError || st.Reason != metav1.StatusReasonInternalError {
		t.Errorf("got %d %s, want 500 InternalError", r.code, st.Reason)
	}
}
