package pool

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckLeaderCert(t *testing.T) {
	cert := func(cn string, orgs ...string) tls.ConnectionState {
		return tls.ConnectionState{PeerCertificates: []*x509.Certificate{{Subject: pkix.Name{CommonName: cn, Organization: orgs}}}}
	}
	for _, tc := range []struct {
		name string
		cs   tls.ConnectionState
		ok   bool
	}{
		{"the leader's node", cert("system:node:edge-a", "system:nodes"), true},
		{"another node", cert("system:node:edge-b", "system:nodes"), false},
		{"not in system:nodes", cert("system:node:edge-a"), false},
		{"a user", cert("admin", "system:masters"), false},
		{"no certificate", tls.ConnectionState{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLeaderCert(tc.cs, "edge-a")
			if (err == nil) != tc.ok {
				t.Errorf("got %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrNotTheLeader) {
				t.Errorf("error %v is not ErrNotTheLeader", err)
			}
		})
	}
}

func TestCountBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 1234))
	}))
	defer srv.Close()
	s := NewStats()
	s.use("v1/services", "pool:edge-a")
	client := &http.Client{Transport: s.CountBytes("v1/services", "pool:edge-a")(http.DefaultTransport)}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := s.Snapshot()["v1/services"].Bytes["pool:edge-a"]; got != 1234 {
		t.Errorf("counted %d bytes, want 1234", got)
	}
}
