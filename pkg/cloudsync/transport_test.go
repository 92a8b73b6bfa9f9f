package cloudsync

import (
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
)

func TestConfigureTransportSetsHTTP2HealthCheck(t *testing.T) {
	var wrapped bool
	cfg := &rest.Config{Host: "https://cloud.example:6443", WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		wrapped = true
		return rt
	}}
	ConfigureTransport(cfg)
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
