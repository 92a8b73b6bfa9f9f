package link

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// TestConnsWatchTheCloudTransport: requests through a configured client
// are heard, and CloseAll closes the connection, which is reported, so
// the next request dials a new one.
func TestConnsWatchTheCloudTransport(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"major":"1","minor":"36"}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	conns := NewConns(clk)
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	ConfigureTransport(cfg, conns)
	probe, err := NewProbe(cfg)
	if err != nil {
		t.Fatalf("NewProbe: %v", err)
	}
	ctx := context.Background()
	if err := probe(ctx); err != nil {
		t.Fatalf("first request: %v", err)
	}
	if got := conns.LastRead(); !got.Equal(clk.Now()) {
		t.Errorf("LastRead after a request: got %v, want %v", got, clk.Now())
	}
	clk.Step(time.Minute)
	if err := probe(ctx); err != nil {
		t.Fatalf("second request: %v", err)
	}
	if got := conns.LastRead(); !got.Equal(clk.Now()) {
		t.Errorf("LastRead after the second request: got %v, want %v", got, clk.Now())
	}
	if got := dials.Load(); got != 1 {
		t.Fatalf("connections after two requests: got %d, want 1 (HTTP/2 reuses it)", got)
	}
	select {
	case <-conns.Closed():
		t.Fatalf("Closed: got a report before any connection closed")
	default:
	}

	// A connection heard just now and closed by the client is not lost:
	// it is what an idle connection's close looks like.
	conns.CloseAll()
	select {
	case <-conns.Closed():
		t.Fatalf("Closed: got a report for a healthy connection closed by the client")
	case <-time.After(50 * time.Millisecond):
	}
	if err := probe(ctx); err != nil {
		t.Fatalf("request after CloseAll: %v", err)
	}
	if got := dials.Load(); got != 2 {
		t.Errorf("connections after CloseAll and a request: got %d, want 2", got)
	}

	// One silent for the PING's idle time when closed is lost: a failed
	// PING.
	clk.Step(http2ReadIdleTimeout)
	conns.CloseAll()
	select {
	case <-conns.Closed():
	case <-time.After(waitTimeout):
		t.Fatalf("Closed: no report within %v of closing a silent connection", waitTimeout)
	}

}

// Every dial to the cloud through a configured transport ends once the
// injected clock passes dialTimeout: a black-holed cloud fails within
// seconds for every client sharing the transport, the local API's proxy
// included.
func TestConnsBoundDials(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // a SYN that is never answered
		return nil, ctx.Err()
	}}
	configureBase(tr, tr, NewConns(clk))
	errc := make(chan error, 1)
	go func() {
		_, err := tr.DialContext(context.Background(), "tcp", "192.0.2.1:443")
		errc <- err
	}()
	waitFor(t, "the dial to set its timer", clk.HasWaiters)
	clk.Step(dialTimeout - time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("dial ended before dialTimeout: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	clk.Step(time.Millisecond)
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("dial: got %v, want it cancelled", err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("dial did not end after dialTimeout")
	}
}

// TestConnsDialIsNotARead: a dial that completes to a peer that never
// sends a byte (a proxy whose upstream is a black hole) leaves LastRead
// where it was, so the Link does not take the handshake for the cloud.
func TestConnsDialIsNotARead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer func() { _ = c.Close() }() // held open, silent, until the test ends
		}
	}()
	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	conns := NewConns(clk)
	tr := &http.Transport{}
	baseTransportMu.Lock()
	conns.wrapLocked(tr, tr)
	baseTransportMu.Unlock()
	c, err := tr.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = c.Close() }()
	if got := conns.LastRead(); !got.IsZero() {
		t.Errorf("LastRead after a dial and no byte: got %v, want zero", got)
	}
}

// TestConnsTellALostPing: a connection closed as its HTTP/2 client closes
// one whose PING went unanswered (silent for http2ReadIdleTimeout +
// http2PingTimeout), with no byte read on any connection meanwhile, is a
// lost PING; other closes of silent connections are reported as closed
// only, and a close of a connection heard recently not at all.
func TestConnsTellALostPing(t *testing.T) {
	const closesAt = http2ReadIdleTimeout + http2PingTimeout
	for _, tt := range []struct {
		name string
		// silent is how long the closed connection was silent; heard is
		// how long before the close another connection read a byte (0:
		// none did after the closed one).
		silent, heard time.Duration
		failed        bool
		wantClosed    bool
		wantLost      bool
	}{
		{"PING unanswered, link silent", closesAt, 0, false, true, true},
		{"PING unanswered, closed a little late", closesAt + pingCloseSlack/2, 0, false, true, true},
		{"PING unanswered, another connection heard meanwhile", closesAt, time.Second, false, true, false},
		{"closed while its PING was in flight", http2ReadIdleTimeout, 0, false, true, false},
		{"idle one closed by its transport", 90 * time.Second, 0, false, true, false},
		{"read failed", closesAt, 0, true, true, false},
		{"heard recently", time.Second, 0, false, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
			conns := NewConns(clk)
			local, remote := net.Pipe()
			defer remote.Close()
			w := &watchedConn{Conn: local, conns: conns}
			w.lastRead.Store(conns.heard())
			w.failed.Store(tt.failed)
			clk.Step(tt.silent)
			if tt.heard > 0 {
				conns.lastRead.Store(clk.Now().Add(-tt.heard).UnixNano())
			}
			_ = w.Close()
			gotClosed := false
			select {
			case <-conns.Closed():
				gotClosed = true
			default:
			}
			if gotClosed != tt.wantClosed {
				t.Errorf("closed reported: got %v, want %v", gotClosed, tt.wantClosed)
			}
			wantLost := time.Time{}
			if tt.wantLost {
				wantLost = clk.Now()
			}
			if got := conns.LostPing(); !got.Equal(wantLost) {
				t.Errorf("LostPing: got %v, want %v", got, wantLost)
			}
		})
	}
}
