package link

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// h2Cloud is a TLS server speaking HTTP/2, as kube-apiserver does, that
// counts the connections it accepted and the TLS handshakes it began.
type h2Cloud struct {
	srv        *httptest.Server
	accepted   atomic.Int32
	handshakes atomic.Int32
}

// newH2Cloud starts a cloud; each onHello runs at the start of every
// handshake with its number, from 1.
func newH2Cloud(t *testing.T, onHello ...func(n int32)) *h2Cloud {
	t.Helper()
	c := &h2Cloud{}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	c.srv.EnableHTTP2 = true
	c.srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		n := c.handshakes.Add(1)
		for _, f := range onHello {
			f(n)
		}
		return nil, nil
	}}
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.accepted.Add(1)
		}
	}
	c.srv.StartTLS()
	t.Cleanup(c.srv.Close)
	return c
}

// config is a client configuration of the cloud, configured as the
// daemon's (ConfigureTransport).
func (c *h2Cloud) config() *rest.Config {
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.srv.Certificate().Raw})
	cfg := &rest.Config{Host: c.srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	ConfigureTransport(cfg, NewConns(nil))
	return cfg
}

func get(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("HTTPClientFor: %v", err)
	}
	return hc
}

// TestConcurrentFirstRequestsShareOneConnection: a start's first requests
// (the probe, every sync's list or watch, through clients of their own)
// reach the cloud at once; they must cost it one TLS connection, not one
// each.
func TestConcurrentFirstRequestsShareOneConnection(t *testing.T) {
	const requests = 20
	cloud := newH2Cloud(t)
	cfg := cloud.config()
	clients := []*http.Client{httpClient(t, cfg), httpClient(t, cfg)}
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			if err := get(t.Context(), clients[i%len(clients)], cloud.srv.URL+"/version"); err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if got := cloud.accepted.Load(); got != 1 {
		t.Errorf("got %d connections accepted for %d concurrent first requests, want 1", got, requests)
	}
}

// TestClientsBuiltLaterShareTheConnection: a client made and dropped at
// start (the SelfSubjectReview's) and the clients made after it share one
// connection, even when the garbage collector ran between them: client-go
// holds its transports weakly.
func TestClientsBuiltLaterShareTheConnection(t *testing.T) {
	cloud := newH2Cloud(t)
	cfg := cloud.config()
	func() { // the first client is dropped, as the review's is
		if err := get(t.Context(), httpClient(t, cfg), cloud.srv.URL+"/apis"); err != nil {
			t.Fatalf("first client: %v", err)
		}
	}()
	for range 3 { // the transport cache's cleanups run after a collection
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if err := get(t.Context(), httpClient(t, cfg), cloud.srv.URL+"/version"); err != nil {
		t.Fatalf("later client: %v", err)
	}
	if got := cloud.accepted.Load(); got != 1 {
		t.Errorf("got %d connections accepted, want the later client on the first's (1)", got)
	}
}

// TestFailedFirstRequestReleasesTheOthers: when the request dialing the
// first connection fails, the waiting ones are sent (and fail on their
// own) instead of hanging.
func TestFailedFirstRequestReleasesTheOthers(t *testing.T) {
	const requests = 5
	cloud := newH2Cloud(t)
	cfg := cloud.config()
	cloud.srv.Close() // refused from now on
	hc := httpClient(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	errs := make(chan error, requests)
	for range requests {
		go func() { errs <- get(ctx, hc, cloud.srv.URL+"/version") }()
	}
	for i := range requests {
		select {
		case err := <-errs:
			if err == nil {
				t.Errorf("request %d: got success from a closed cloud, want an error", i)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("got %d of %d requests answered, want all: waiters hang behind a failed dial", i, requests)
		}
	}
}

// TestFirstRequestGivingUpHandsOverTheDial: on a busy machine the first
// request (the probe) may give up while its connection's TLS handshake is
// still under way; the waiting requests must then dial one at a time, not
// one connection each (a fleet-wide restart at 100 nodes cost the cloud
// thousands of handshakes so).
func TestFirstRequestGivingUpHandsOverTheDial(t *testing.T) {
	const (
		waiting = 10
		// slowHandshake delays the server's first handshake past the
		// first request's patience.
		slowHandshake = 300 * time.Millisecond
		patience      = 50 * time.Millisecond
	)
	cloud := newH2Cloud(t, func(n int32) {
		if n == 1 {
			time.Sleep(slowHandshake)
		}
	})
	hc := httpClient(t, cloud.config())
	first, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	started := make(chan struct{})
	firstErr := make(chan error, 1)
	go func() {
		close(started)
		firstErr <- get(first, hc, cloud.srv.URL+"/version")
	}()
	<-started
	time.Sleep(patience / 5) // the others queue behind the first
	ctx, cancelAll := context.WithTimeout(t.Context(), waitTimeout)
	defer cancelAll()
	var wg sync.WaitGroup
	for i := range waiting {
		wg.Go(func() {
			if err := get(ctx, hc, cloud.srv.URL+"/version"); err != nil {
				t.Errorf("waiting request %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if err := <-firstErr; err == nil {
		t.Errorf("got the impatient first request answered, want it to give up")
	}
	if got := cloud.handshakes.Load(); got > 2 {
		t.Errorf("got %d TLS handshakes for %d requests waiting behind a first that gave up, want at most 2", got, waiting)
	}
}
