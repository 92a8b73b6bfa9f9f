package door

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// testPKI is a CA with a serving pair for 127.0.0.1 and client pairs.
type testPKI struct {
	ca    *x509.Certificate
	key   *ecdsa.PrivateKey
	roots *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &testPKI{ca: ca, key: key, roots: roots}
}

// issue returns a pair for subject, serving 127.0.0.1 when server.
func (p *testPKI) issue(t *testing.T, subject pkix.Name, server bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage, tmpl.IPAddresses = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// reserveDoor serves 200 on a TLS door limited by lim and returns its
// address.
func reserveDoor(t *testing.T, p *testPKI, lim *Limiter) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.issue(t, pkix.Name{CommonName: "door"}, true)},
		ClientCAs: p.roots, ClientAuth: tls.VerifyClientCertIfGiven}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		ConnState: lim.ConnState, ConnContext: lim.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	cfg := lim.TLSConfig(base)
	go func() { _ = srv.Serve(tls.NewListener(lim.Listener(ln, true), cfg)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dialGet opens a connection of its own to addr with cert (none when
// nil), GETs / on it and returns the client (to close) and the outcome.
func dialGet(t *testing.T, p *testPKI, addr string, cert *tls.Certificate) (*http.Client, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: p.roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
	resp, err := client.Get("https://" + addr + "/")
	if err != nil {
		return client, err
	}
	resp.Body.Close()
	return client, nil
}

func TestConnectionReserve(t *testing.T) {
	p := newTestPKI(t)
	// 8 connections: 2 reserved for the node; 2 per source.
	lim := NewLimiter(Limits{MaxConnections: 8, MaxConnectionsPerSource: 2}, LimiterConfig{NodeName: "n1"})
	addr := reserveDoor(t, p, lim)
	node := p.issue(t, pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, false)
	other := p.issue(t, pkix.Name{CommonName: "system:node:n2", Organization: []string{"system:nodes"}}, false)
	var open []*http.Client
	defer func() {
		for _, c := range open {
			c.CloseIdleConnections()
		}
	}()
	for i := range 2 {
		c, err := dialGet(t, p, addr, nil)
		if err != nil {
			t.Fatalf("connection %d within the source's share: %v", i, err)
		}
		open = append(open, c)
	}
	for _, tc := range []struct {
		name    string
		cert    *tls.Certificate
		wantErr bool
	}{
		{name: "anonymous past the source's share", wantErr: true},
		{name: "another node's certificate past the source's share", cert: &other, wantErr: true},
		{name: "this node's certificate in the reserve", cert: &node},
		{name: "this node's certificate, second of the reserve", cert: &node},
		{name: "this node's certificate past the reserve", cert: &node, wantErr: true},
	} {
		dial := dialGet
		if !tc.wantErr {
			// a refused connection's place comes back when the server has
			// closed it, which the client's failed handshake may precede
			dial = dialEventually
		}
		c, err := dial(t, p, addr, tc.cert)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s: got error %v, want error %v", tc.name, err, tc.wantErr)
		}
		if err == nil {
			open = append(open, c)
		}
	}
	open[0].CloseIdleConnections()
	c, err := dialEventually(t, p, addr, nil)
	if err != nil {
		t.Fatalf("anonymous after one of the source's connections closed: got %v, want a connection", err)
	}
	open = append(open, c)
}

// closeSeenWithin bounds how long the door may take to see a connection
// closed and give back its place.
const closeSeenWithin = 5 * time.Second

// dialEventually retries dialGet until it succeeds or closeSeenWithin
// passed: the server sees a close asynchronously.
func dialEventually(t *testing.T, p *testPKI, addr string, cert *tls.Certificate) (*http.Client, error) {
	t.Helper()
	deadline := time.Now().Add(closeSeenWithin)
	for {
		c, err := dialGet(t, p, addr, cert)
		if err == nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHandshakeDeadline(t *testing.T) {
	by := time.Unix(1000, 0)
	for _, tc := range []struct {
		name      string
		handshook bool
		set, want time.Time
	}{
		{name: "no deadline before the handshake", set: time.Time{}, want: by},
		{name: "a later deadline before the handshake", set: by.Add(time.Minute), want: by},
		{name: "an earlier deadline before the handshake", set: by.Add(-time.Second), want: by.Add(-time.Second)},
		{name: "no deadline after the handshake", handshook: true, set: time.Time{}, want: time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &doorConn{handshakeBy: by}
			c.handshook.Store(tc.handshook)
			if got := c.clamp(tc.set); !got.Equal(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIdleUnauthenticatedConnectionCloses(t *testing.T) {
	for _, authenticated := range []bool{false, true} {
		clk := testingclock.NewFakeClock(time.Unix(1000, 0))
		lim := NewLimiter(Limits{}, LimiterConfig{Clock: clk})
		server, client := net.Pipe()
		dc, _ := lim.admitConn(server)
		dc.authenticated.Store(authenticated)
		lim.ConnState(dc, http.StateIdle)
		clk.Step(unauthenticatedIdleTimeout)
		_ = client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := client.Read(make([]byte, 1))
		closed := err != nil && !isTimeout(err)
		if closed == authenticated {
			t.Fatalf("authenticated %v, idle %s: got closed %v (%v), want %v", authenticated, unauthenticatedIdleTimeout, closed, err, !authenticated)
		}
		_ = client.Close()
		_ = dc.Close()
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestHandshakeSlots(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	lim := NewLimiter(Limits{}, LimiterConfig{Clock: clk})
	var held []*doorConn
	for range handshakeSlots() {
		dc := &doorConn{lim: lim, handshakeBy: clk.Now().Add(handshakeTimeout)}
		if !lim.acquireHandshake(dc) {
			t.Fatal("a free handshake slot: got none")
		}
		held = append(held, dc)
	}
	late := &doorConn{lim: lim, handshakeBy: clk.Now().Add(handshakeTimeout)}
	got := make(chan bool)
	go func() { got <- lim.acquireHandshake(late) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(handshakeTimeout)
	if <-got {
		t.Fatalf("with every slot taken past the deadline: got a slot, want none")
	}
	server, client := net.Pipe()
	defer client.Close()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	held[0].Conn = server
	_, _ = held[0].Write([]byte("server flight")) // the first write gives the slot back
	if !lim.acquireHandshake(late) {
		t.Fatalf("after a handshake's first write: got no slot, want one")
	}
}
