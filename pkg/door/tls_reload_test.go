package door

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"
)

// dialTimeout only turns a hang into a failure.
const dialTimeout = 30 * time.Second

// pemPair is a generated serving pair for host, and its leaf in DER.
type pemPair struct {
	cert, key, leaf []byte
}

func mustPair(t *testing.T, host string) pemPair {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair{cert: certPEM, key: keyPEM, leaf: pair.Certificate[0]}
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tlsFiles is a TLS door whose files a test rotates.
type tlsFiles struct {
	cert, key, ca string
	clock         *clocktesting.FakeClock
	cfg           *tls.Config
}

func newTLSFiles(t *testing.T, p pemPair, caPEM []byte) *tlsFiles {
	t.Helper()
	dir := t.TempDir()
	f := &tlsFiles{cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key"), ca: filepath.Join(dir, "ca.crt"),
		clock: clocktesting.NewFakeClock(time.Now())}
	f.write(t, p)
	mustWrite(t, f.ca, caPEM)
	cfg, _, err := ServerTLS(TLSOptions{CertFile: f.cert, KeyFile: f.key, ClientCAFile: f.ca, Clock: f.clock}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	return f
}

func (f *tlsFiles) write(t *testing.T, p pemPair) {
	t.Helper()
	mustWrite(t, f.cert, p.cert)
	mustWrite(t, f.key, p.key)
}

// served is the configuration a handshake now gets.
func (f *tlsFiles) served(t *testing.T) *tls.Config {
	t.Helper()
	cfg, err := f.cfg.GetConfigForClient(&tls.ClientHelloInfo{})
	if err != nil || cfg == nil {
		t.Fatalf("GetConfigForClient: got %v, %v", cfg, err)
	}
	return cfg
}

func (f *tlsFiles) servedLeaf(t *testing.T) []byte {
	t.Helper()
	return f.served(t).Certificates[0].Certificate[0]
}

func TestTLSDoorReloadsRotatedServingPair(t *testing.T) {
	a, b, c := mustPair(t, "a"), mustPair(t, "b"), mustPair(t, "c")
	f := newTLSFiles(t, a, a.cert)
	f.write(t, b)
	for _, step := range []struct {
		name    string
		advance time.Duration
		write   func()
		want    []byte
	}{
		{"rotated, before the check interval", tlsFileCheckInterval / 2, nil, a.leaf},
		{"rotated, after the check interval", tlsFileCheckInterval / 2, nil, b.leaf},
		{"a key that does not match", tlsFileCheckInterval, func() { mustWrite(t, f.key, c.key) }, b.leaf},
		{"half-written certificate", tlsFileCheckInterval, func() { mustWrite(t, f.cert, c.cert[:len(c.cert)/2]) }, b.leaf},
		{"good again", tlsFileCheckInterval, func() { f.write(t, c) }, c.leaf},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.write != nil {
				step.write()
			}
			f.clock.Step(step.advance)
			if got := f.servedLeaf(t); !bytes.Equal(got, step.want) {
				t.Errorf("got another certificate than the one wanted")
			}
		})
	}
}

func TestTLSDoorReloadsRotatedClientCA(t *testing.T) {
	a := mustPair(t, "a")
	ca1, ca2 := mustPair(t, "ca1").cert, mustPair(t, "ca2").cert
	pool := func(pem []byte) *x509.CertPool {
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(pem)
		return p
	}
	f := newTLSFiles(t, a, ca1)
	mustWrite(t, f.ca, []byte("not a certificate"))
	f.clock.Step(tlsFileCheckInterval)
	if got := f.served(t); !got.ClientCAs.Equal(pool(ca1)) || got.ClientAuth != tls.VerifyClientCertIfGiven {
		t.Errorf("after a CA file with no certificate: got other client CAs or auth %v, want the old ones", got.ClientAuth)
	}
	mustWrite(t, f.ca, ca2)
	f.clock.Step(tlsFileCheckInterval)
	if got := f.served(t); !got.ClientCAs.Equal(pool(ca2)) {
		t.Errorf("after rotation: got the old client CAs, want the new ones")
	}
}

// A real handshake sees the rotated certificate.
func TestTLSDoorHandshakeSeesRotation(t *testing.T) {
	a, b := mustPair(t, "a"), mustPair(t, "b")
	f := newTLSFiles(t, a, a.cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
	}()
	peer := func() []byte {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: dialTimeout}, "tcp", ln.Addr().String(),
			&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test reads the served certificate
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Raw
	}
	if !bytes.Equal(peer(), a.leaf) {
		t.Fatal("first handshake: got another certificate than the loaded one")
	}
	f.write(t, b)
	f.clock.Step(tlsFileCheckInterval)
	if !bytes.Equal(peer(), b.leaf) {
		t.Error("handshake after rotation: got the old certificate, want the new one")
	}
}
