package main

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
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
		bindErr: door.ErrAddressNotBound, lim: door.NewLimiter(door.Limits{}, door.LimiterConfig{})}
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
