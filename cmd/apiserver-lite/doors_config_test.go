package main

import (
	"strings"
	"testing"
	"time"
)

func TestDoorsConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults"},
		{name: "remote insecure door", args: []string{"--insecure-listen-address", "0.0.0.0:10550"}, wantErr: "not a loopback"},
		{name: "remote insecure allowed", args: []string{"--insecure-listen-address", "0.0.0.0:10550", "--insecure-allow-remote"}},
		{name: "remote kubelet door (authenticated)", args: []string{"--listen-address", "0.0.0.0:10550"}},
		{name: "kubelet door off, tls on", args: []string{"--listen-address", "", "--secure-listen-address", "10.0.0.1:10551"}},
		{name: "only the insecure door", args: []string{"--listen-address", "", "--insecure-listen-address", "127.0.0.1:10552"}},
		{name: "no door", args: []string{"--listen-address", ""}, wantErr: "no door"},
		{name: "cert without key", args: []string{"--tls-cert-file", "c"}, wantErr: "set together"},
		{name: "zero cap", args: []string{"--max-watches-per-client", "0"}, wantErr: "max-watches-per-client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(append([]string{"--node-name", "n1"}, tc.args...))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if c.OfflineAuthzGrace != 24*time.Hour || c.MaxRequestsInflight <= 0 {
					t.Fatalf("got grace %s, in-flight cap %d; want the defaults", c.OfflineAuthzGrace, c.MaxRequestsInflight)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
			}
		})
	}
}

func TestDoorsConfigFileKeys(t *testing.T) {
	file := mustWriteFile(t, "node-name: n1\nsecure-listen-address: 10.0.0.1:10551\nmax-connections: 7\noffline-authz-grace: 1h\n")
	c, err := loadConfig([]string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if c.SecureListenAddress != "10.0.0.1:10551" || c.MaxConnections != 7 || c.OfflineAuthzGrace != time.Hour {
		t.Fatalf("got %+v, want the file's door settings", c.doorsConfig)
	}
}
