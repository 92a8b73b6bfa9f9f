package main

import (
	"net"
	"strings"
	"testing"
)

func TestBootstrapConfig(t *testing.T) {
	const door = "169.254.20.10:10551"
	for _, tc := range []struct {
		name        string
		args        []string
		wantErr     string
		wantRewrite bool
		wantIPs     []string
		// wantShared: a link-local door left out of the certificate is
		// warned about.
		wantShared bool
	}{
		{name: "defaults"},
		{name: "bootstrap without pods' door", args: []string{"--tls-bootstrap"}, wantErr: "needs secure-listen-address"},
		{name: "bootstrap with a cert file for the kubelet's door", args: []string{"--tls-bootstrap", "--secure-listen-address", door,
			"--tls-cert-file", "c", "--tls-private-key-file", "k"}, wantRewrite: true, wantShared: true},
		{name: "bootstrap turns the rewrite on", args: []string{"--tls-bootstrap", "--secure-listen-address", door,
			"--tls-bootstrap-ip-sans", "10.1.2.3,169.254.20.10"}, wantRewrite: true, wantIPs: []string{"10.1.2.3", "169.254.20.10"}},
		{name: "rewrite off", args: []string{"--tls-bootstrap", "--secure-listen-address", door,
			"--rewrite-kubernetes-service", "false"}, wantShared: true},
		{name: "per-node door address", args: []string{"--tls-bootstrap", "--secure-listen-address", "192.0.2.7:10551"},
			wantRewrite: true, wantIPs: []string{"192.0.2.7"}},
		{name: "wildcard door: auto stays off", args: []string{"--tls-bootstrap", "--secure-listen-address", "0.0.0.0:10551",
			"--tls-bootstrap-ip-sans", "10.1.2.3"}, wantIPs: []string{"10.1.2.3"}},
		{name: "rewrite forced on a wildcard door", args: []string{"--secure-listen-address", "0.0.0.0:10551",
			"--rewrite-kubernetes-service", "true"}, wantErr: "not a specific IP"},
		{name: "rewrite without bootstrap", args: []string{"--secure-listen-address", door,
			"--rewrite-kubernetes-service", "true"}, wantRewrite: true},
		{name: "bad rewrite value", args: []string{"--rewrite-kubernetes-service", "yes"}, wantErr: "want auto, true or false"},
		{name: "bad SAN", args: []string{"--tls-bootstrap", "--secure-listen-address", door,
			"--tls-bootstrap-ip-sans", "node-1"}, wantErr: "not an IP address"},
		{name: "short lifetime", args: []string{"--tls-bootstrap", "--secure-listen-address", door,
			"--tls-bootstrap-lifetime", "5m"}, wantErr: "at least 10m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(append([]string{"--node-name", "n1"}, tc.args...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if got := c.rewritesKubernetesService(); got != tc.wantRewrite {
				t.Errorf("rewrite: got %v, want %v", got, tc.wantRewrite)
			}
			if shared := c.sharedDoorAddress() != ""; shared != tc.wantShared {
				t.Errorf("shared door address warning: got %v, want %v", shared, tc.wantShared)
			}
			got := c.bootstrapIPs()
			if len(got) != len(tc.wantIPs) {
				t.Fatalf("IP SANs: got %v, want %v", got, tc.wantIPs)
			}
			for i, ip := range tc.wantIPs {
				if !got[i].Equal(net.ParseIP(ip)) {
					t.Errorf("IP SAN %d: got %v, want %s", i, got[i], ip)
				}
			}
		})
	}
}
