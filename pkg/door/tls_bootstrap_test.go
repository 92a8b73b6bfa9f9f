package door

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
)

// fakeManager is a certificate.Manager whose current pair the test sets.
type fakeManager struct {
	mu  sync.Mutex
	cur *tls.Certificate
}

func (m *fakeManager) Start()              {}
func (m *fakeManager) Stop()               {}
func (m *fakeManager) ServerHealthy() bool { return true }
func (m *fakeManager) Current() *tls.Certificate {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}
func (m *fakeManager) set(c *tls.Certificate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur = c
}

// signedPair is a serving pair for 127.0.0.1 as PEM.
func signedPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("n1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

func mustBootstrapPair(t *testing.T) *tls.Certificate {
	t.Helper()
	c, err := parsePair(signedPair(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBootstrapStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sealer bool
	}{{"plaintext", false}, {"sealed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var s KeySealer
			if tc.sealer {
				s = newKeySealer(t)
			}
			st := newBootstrapStore(dir, s)
			var noCert *certificate.NoCertKeyError
			if _, err := st.Current(); !errors.As(err, &noCert) {
				t.Fatalf("empty store: got %v, want a NoCertKeyError", err)
			}
			certPEM, keyPEM := signedPair(t)
			stored, err := st.Update(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			got, err := newBootstrapStore(dir, s).Current()
			if err != nil {
				t.Fatal(err)
			}
			if got.Leaf == nil || !got.Leaf.Equal(stored.Leaf) {
				t.Errorf("reloaded pair: got leaf %v, want the stored one", got.Leaf)
			}
			raw, err := os.ReadFile(st.path)
			if err != nil {
				t.Fatal(err)
			}
			if isPEM(raw) == tc.sealer {
				t.Errorf("file is PEM %v, want %v (sealed %v)", isPEM(raw), !tc.sealer, tc.sealer)
			}
			fi, _ := os.Stat(st.path)
			if fi.Mode().Perm() != privateFileMode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), os.FileMode(privateFileMode))
			}
		})
	}
}

// A pair stored before the state key was set is sealed in place; a file
// that does not load asks the manager for a new certificate.
func TestBootstrapStoreSealsAndRecovers(t *testing.T) {
	dir, s := t.TempDir(), newKeySealer(t)
	certPEM, keyPEM := signedPair(t)
	if _, err := newBootstrapStore(dir, nil).Update(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	st := newBootstrapStore(dir, s)
	if _, err := st.Current(); err != nil {
		t.Fatalf("plaintext pair with a state key: %v", err)
	}
	if raw, _ := os.ReadFile(st.path); isPEM(raw) {
		t.Error("plaintext pair not sealed in place")
	}
	if err := ResealBootstrapPair(dir, s, nil); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(st.path); !isPEM(raw) {
		t.Error("ResealBootstrapPair to no key left the pair sealed")
	}
	if err := os.WriteFile(st.path, []byte("garbage"), privateFileMode); err != nil {
		t.Fatal(err)
	}
	var noCert *certificate.NoCertKeyError
	if _, err := st.Current(); !errors.As(err, &noCert) {
		t.Errorf("unreadable pair: got %v, want a NoCertKeyError", err)
	}
}

// A rotated certificate serves new handshakes while a connection opened
// before keeps its own, and no certificate fails the handshake.
func TestBootstrapServingHotSwap(t *testing.T) {
	mgr := &fakeManager{}
	b := &BootstrapServing{mgr: mgr, log: slog.New(slog.DiscardHandler)}
	base, err := servingConfig(servingContents{cert: mustPEM(t, 0), key: mustPEM(t, 1)}, "")
	if err != nil {
		t.Fatal(err)
	}
	files := &servingFiles{cfg: base}
	base = base.Clone()
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { return files.cfg, nil }
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = b.ServerTLS(base)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if _, err := old.Get(srv.URL); err == nil {
		t.Fatal("handshake without a signed certificate: got no error, want one")
	}
	first, second := mustBootstrapPair(t), mustBootstrapPair(t)
	mgr.set(first)
	if got := servedLeaf(t, old, srv.URL); !got.Equal(first.Leaf) {
		t.Fatalf("first certificate: got serial %v, want %v", got.SerialNumber, first.Leaf.SerialNumber)
	}
	mgr.set(second)
	if got := servedLeaf(t, old, srv.URL); !got.Equal(first.Leaf) {
		t.Errorf("open connection after rotation: got serial %v, want the first %v", got.SerialNumber, first.Leaf.SerialNumber)
	}
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if got := servedLeaf(t, fresh, srv.URL); !got.Equal(second.Leaf) {
		t.Errorf("new connection after rotation: got serial %v, want the second %v", got.SerialNumber, second.Leaf.SerialNumber)
	}
}

// mustPEM returns the certificate (0) or key (1) of one generated pair,
// kept per test.
func mustPEM(t *testing.T, i int) []byte {
	t.Helper()
	pemCache.once.Do(func() { pemCache.cert, pemCache.key = signedPair(t) })
	if i == 0 {
		return pemCache.cert
	}
	if _, err := keyutil.ParsePrivateKeyPEM(pemCache.key); err != nil {
		t.Fatal(err)
	}
	return pemCache.key
}

var pemCache struct {
	once      sync.Once
	cert, key []byte
}

func servedLeaf(t *testing.T, c *http.Client, url string) *x509.Certificate {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.TLS.PeerCertificates[0]
}
