package door

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// An unbound door is noted in /readyz, never failing it; once its address
// can be bound, the next retry serves it and the note says so.
func TestPodsDoorWaitsForItsAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	clk := clocktesting.NewFakeClock(time.Now())
	p := &podsDoor{addr: addr, log: slog.New(slog.DiscardHandler), clock: clk, done: make(chan struct{}),
		bindErr: ErrAddressNotBound, lim: NewLimiter(Limits{}, LimiterConfig{})}
	name, info, ok := p.note()
	if !ok || name != "pods-door" || !strings.Contains(info, "not bound") {
		t.Fatalf("unbound door: got %q %q, want an informational note saying not bound", name, info)
	}
	srv := &http.Server{Addr: addr, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}, Handler: http.NotFoundHandler()}
	served := make(chan error, 1)
	go func() { served <- p.serveWhenBound(srv) }()
	deadline := time.Now().Add(10 * time.Second)
	for p.unbound() {
		if time.Now().After(deadline) {
			t.Fatal("door not bound after the retry")
		}
		clk.Step(bindRetryInterval)
		time.Sleep(10 * time.Millisecond)
	}
	if _, info, _ := p.note(); strings.Contains(info, "not bound") {
		t.Errorf("bound door: got note %q, want it bound", info)
	}
	p.stop()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("serve: got %v, want ErrServerClosed", err)
	}
}

// The loopback door never compresses: the handler behind it sees no
// Accept-Encoding, whatever the client sent.
func TestLoopbackDoorDoesNotCompress(t *testing.T) {
	var got string
	h := WithoutCompression(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Accept-Encoding")
	}))
	r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got != "" {
		t.Errorf("got Accept-Encoding %q behind the loopback door, want none", got)
	}
}
