package proxy

import (
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// waitTimeout only turns a hang into a failure.
const waitTimeout = 30 * time.Second

// The header timeout, on the injected clock, fails a cloud that accepted
// the request but never answers, and does not cut a body that streams
// after headers arrived.
func TestHeaderTimeout(t *testing.T) {
	const timeout = time.Minute
	release := make(chan struct{})
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stalled" {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "late body")
	}))
	t.Cleanup(cloud.Close)
	fc := testingclock.NewFakeClock(time.Now())
	rt := &headerTimeoutTransport{next: http.DefaultTransport, timeout: timeout, clock: fc}

	req, err := http.NewRequest(http.MethodGet, cloud.URL+"/stalled", nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitForWaiter(t, fc)
	fc.Step(timeout)
	select {
	case err := <-errc:
		if err == nil {
			t.Fatalf("got a response from a stalled cloud, want an error")
		}
	case <-time.After(waitTimeout):
		t.Fatalf("stalled round trip did not fail after the header timeout")
	}

	req, err = http.NewRequest(http.MethodGet, cloud.URL+"/streaming", nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("round trip: %v", err)
	}
	defer resp.Body.Close()
	fc.Step(3 * timeout) // past the header timeout
	close(release)
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "late body" {
		t.Errorf("got body %q, %v, want \"late body\"", b, err)
	}
}

// waitForWaiter blocks until the fake clock has a pending timer.
func waitForWaiter(t *testing.T, fc *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !fc.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatalf("no timer armed within %s", waitTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestObjectRV(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       uint64
		ok         bool
	}{
		{"object", `{"kind":"Pod","metadata":{"resourceVersion":"25"}}`, 25, true},
		{"status", `{"kind":"Status","metadata":{"resourceVersion":"3"}}`, 0, false},
		{"no rv", `{"kind":"Pod","metadata":{}}`, 0, false},
		{"garbage", `{`, 0, false},
	} {
		if got, ok := objectRV([]byte(tc.body), response.MediaTypeJSON, ""); got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %d %v, want %d %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := objectRV([]byte(`{"kind":"Pod","metadata":{"resourceVersion":"25"}}`), response.MediaTypeJSON, "br"); ok {
		t.Errorf("unknown encoding: got ok")
	}
}

// FuzzObjectRV feeds arbitrary cloud write responses to the
// resourceVersion reader: it must not panic, and it accepts only RVs above
// 0.
func FuzzObjectRV(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","resourceVersion":"25"}}`), false)
	f.Add([]byte(`{"kind":"Status","metadata":{"resourceVersion":"3"}}`), false)
	f.Add([]byte("k8s\x00\x0a\x04\x0a\x02v1"), true)
	f.Fuzz(func(t *testing.T, body []byte, protobuf bool) {
		mediaType := response.MediaTypeJSON
		if protobuf {
			mediaType = response.MediaTypeProtobuf
		}
		rv, ok := objectRV(body, mediaType, "")
		if ok && rv == 0 {
			t.Errorf("got ok with RV 0 for %q", body)
		}
	})
}

// The proxy's requests share the connection of the other clients of the
// same config, as a kubelet's clients share one: a request through a
// client-go client and one through the proxy make one TLS connection.
func TestProxySharesTheCloudConnection(t *testing.T) {
	var dials atomic.Int32
	cloud := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"major":"1","minor":"36"}`))
	}))
	cloud.EnableHTTP2 = true
	cloud.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	cloud.StartTLS()
	t.Cleanup(cloud.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cloud.Certificate().Raw})
	cfg := &rest.Config{Host: cloud.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}

	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatalf("discovery client: %v", err)
	}
	if _, err := disc.ServerVersion(); err != nil {
		t.Fatalf("request through the client: %v", err)
	}
	p, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), Clock: clock.RealClock{}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	req := httptest.NewRequest(http.MethodGet, "/version", nil)
	req = req.WithContext(caller.AsNode(req.Context()))
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("request through the proxy: got %d %s, want 200", rec.Code, rec.Body)
	}
	if got := dials.Load(); got != 1 {
		t.Errorf("connections to the cloud: got %d, want 1 (the proxy shares the client's)", got)
	}
}
