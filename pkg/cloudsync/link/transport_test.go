package link

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

func TestConfigureTransportSetsHTTP2HealthCheck(t *testing.T) {
	var wrapped bool
	cfg := &rest.Config{Host: "https://cloud.example:6443", WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		wrapped = true
		return rt
	}}
	ConfigureTransport(cfg, nil)
	base := &http.Transport{HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 7}}
	if got := cfg.WrapTransport(base); got != base {
		t.Errorf("WrapTransport: got %T, want the transport passed through", got)
	}
	if !wrapped {
		t.Errorf("the WrapTransport set before was not kept")
	}
	h := base.HTTP2
	if h.SendPingTimeout != http2ReadIdleTimeout || h.PingTimeout != http2PingTimeout {
		t.Errorf("got SendPingTimeout %v PingTimeout %v, want %v and %v",
			h.SendPingTimeout, h.PingTimeout, http2ReadIdleTimeout, http2PingTimeout)
	}
	if h.MaxConcurrentStreams != 7 {
		t.Errorf("MaxConcurrentStreams: got %d, want 7 kept", h.MaxConcurrentStreams)
	}
	if _, err := rest.TransportFor(cfg); err != nil {
		t.Errorf("TransportFor: %v", err)
	}
}

func TestProbe(t *testing.T) {
	for _, tt := range []struct {
		name   string
		code   int
		wantOK bool
	}{
		{"ok", http.StatusOK, true},
		{"overloaded cloud is reachable", http.StatusTooManyRequests, true},
		{"server error", http.StatusInternalServerError, false},
		{"bad gateway", http.StatusBadGateway, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.code)
				_, _ = w.Write([]byte(`{"major":"1","minor":"36"}`))
			}))
			defer srv.Close()
			probe, err := NewProbe(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatalf("NewProbe: %v", err)
			}
			err = probe(context.Background())
			if got := err == nil || apierrors.IsTooManyRequests(err); got != tt.wantOK {
				t.Errorf("got error %v, want ok %v", err, tt.wantOK)
			}
			if path != probePath {
				t.Errorf("probed %q, want %q", path, probePath)
			}
		})
	}
}

// TestConfigureTransportReachesClientGoTransport: client-go wraps the
// *http.Transport it builds (its transport cache, CA reloading), and the
// health check must still reach it.
func TestConfigureTransportReachesClientGoTransport(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	ConfigureTransport(cfg, NewConns(nil))
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatalf("TransportFor: %v", err)
	}
	base := baseTransport(rt)
	if base == nil {
		t.Fatalf("no *http.Transport under %T", rt)
	}
	if h := base.HTTP2; h == nil || h.SendPingTimeout != http2ReadIdleTimeout || h.PingTimeout != http2PingTimeout {
		t.Errorf("HTTP2 config of client-go's transport: got %+v, want SendPingTimeout %v PingTimeout %v",
			h, http2ReadIdleTimeout, http2PingTimeout)
	}
}

// TestHTTP2HealthCheckBounds holds the PING timeouts to what they promise:
// a half-open link reported within 15 s (the PING's close, which reports
// it without a probe), a healthy connection heard before the Link would
// probe it, and no PING between two of a kubelet's Lease renewals, each
// PING costing the cloud a read, a write and two wake-ups.
func TestHTTP2HealthCheckBounds(t *testing.T) {
	const (
		halfOpenReported = 15 * time.Second // docs/reliability.md's contract
		leaseRenewal     = 10 * time.Second // the kubelet's default period
		// renewalJitter is the kubelet's jitter of its renewal period
		// (wait.JitterUntil's factor 0.04).
		renewalJitter = leaseRenewal * 4 / 100
		// renewalRoundTrip is what a renewal's round trip may add to the
		// silence between two renewals' answers.
		renewalRoundTrip = 500 * time.Millisecond
	)
	for _, tt := range []struct {
		name      string
		got, want time.Duration
		atMost    bool
	}{
		{"half-open link reported (idle + PING timeout)", http2ReadIdleTimeout + http2PingTimeout, halfOpenReported, true},
		{"PING timeout, against a probe's", http2PingTimeout, probeTimeout, false},
		{"silence before a PING, against the watch progress timeout", http2ReadIdleTimeout, DefaultWatchProgressTimeout, true},
		{"silence before a PING, against a jittered Lease renewal and its round trip", http2ReadIdleTimeout, leaseRenewal + renewalJitter + renewalRoundTrip, false},
		{"a lost PING's close told apart from a silent link's", pingCloseSlack, http2PingTimeout - time.Nanosecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.atMost && tt.got > tt.want {
				t.Errorf("got %v, want at most %v", tt.got, tt.want)
			}
			if !tt.atMost && tt.got < tt.want {
				t.Errorf("got %v, want at least %v", tt.got, tt.want)
			}
		})
	}
}
