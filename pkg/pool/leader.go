package pool

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"
)

const (
	// PingEvery is how long a connection to the leader may be silent
	// before an HTTP/2 ping is sent, and PingTimeout how long the answer
	// may take: a leader gone without closing its connections (power,
	// network) ends its followers' watches within their sum.
	PingEvery   = 3 * time.Second
	PingTimeout = 3 * time.Second
	// dialTimeout bounds a connection to the leader, and handshakeTimeout
	// its TLS handshake: a leader that does not answer is left for the
	// cloud quickly.
	dialTimeout      = 3 * time.Second
	handshakeTimeout = 3 * time.Second
	// nodeUserPrefix and nodesGroup are a node's identity, which the
	// leader's pool door certificate must show.
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// ErrNotTheLeader means the pool door's certificate is not the node the
// Lease names.
var ErrNotTheLeader = errors.New("the pool door's certificate is not the leader's")

// LeaderTransport is the connection to leader h's pool door: TLS verified
// against the cluster CA (caPEM) for h's address, with a certificate whose
// subject is h's node (system:node:<node> in system:nodes), and HTTP/2
// pings so a silent leader ends the watches within PingEvery+PingTimeout.
// With client, the follower's node certificate (client's Certificates or
// GetClientCertificate) is its identity at the door; without, the token
// its caller adds is.
func LeaderTransport(h Holder, caPEM []byte, client *tls.Config) (*http.Transport, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("pool leader transport: no CA certificate")
	}
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error { return checkLeaderCert(cs, h.Node) }}
	if client != nil {
		tc.Certificates, tc.GetClientCertificate = client.Certificates, client.GetClientCertificate
	}
	t := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, TLSHandshakeTimeout: handshakeTimeout,
		DialContext: (&net.Dialer{Timeout: dialTimeout}).DialContext, Proxy: nil}
	t2, err := http2.ConfigureTransports(t)
	if err != nil {
		return nil, fmt.Errorf("pool leader transport: %w", err)
	}
	t2.ReadIdleTimeout, t2.PingTimeout = PingEvery, PingTimeout
	return t, nil
}

// checkLeaderCert refuses a door whose certificate is not node's.
func checkLeaderCert(cs tls.ConnectionState, node string) error {
	if len(cs.PeerCertificates) == 0 {
		return ErrNotTheLeader
	}
	subj := cs.PeerCertificates[0].Subject
	if subj.CommonName != nodeUserPrefix+node || !slices.Contains(subj.Organization, nodesGroup) {
		return fmt.Errorf("%w: %q, want %s%s", ErrNotTheLeader, subj.CommonName, nodeUserPrefix, node)
	}
	return nil
}

// LeaderConfig is the rest.Config of a read at h's pool door over rt.
func LeaderConfig(h Holder, rt http.RoundTripper) *rest.Config {
	return &rest.Config{Host: "https://" + h.Address, Transport: rt, Timeout: 0}
}
