package door

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"
)

// generatedFor is what the generated-pair tests ask a certificate for.
var generatedFor = TLSOptions{Host: "n1", IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNS: []string{"localhost"}}

// generatedOptions are generatedFor in a new data dir, with sealer (nil:
// plaintext), a fake clock and a logger writing to log.
func generatedOptions(t *testing.T, sealer KeySealer, log *bytes.Buffer) (TLSOptions, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	o := generatedFor
	o.DataDir, o.KeySealer, o.Clock = t.TempDir(), sealer, clk
	o.Logger = slog.New(slog.NewTextHandler(log, nil))
	return o, clk
}

// generatedPaths are the generated certificate, key and CA files under
// dataDir.
func generatedPaths(dataDir string) (certFile, keyFile, caFile string) {
	dir := filepath.Join(dataDir, servingDir)
	return filepath.Join(dir, servingCertFile), filepath.Join(dir, servingKeyFile), filepath.Join(dir, servingCAFile)
}

// writeGenerated writes a pair where generatedServing keeps it, through
// the helpers it writes with.
func writeGenerated(t *testing.T, o TLSOptions, certPEM, caPEM, keyPEM []byte) {
	t.Helper()
	certFile, keyFile, caFile := generatedPaths(o.DataDir)
	if err := os.MkdirAll(filepath.Dir(certFile), publicDirMode); err != nil {
		t.Fatal(err)
	}
	if err := writeGeneratedKey(keyFile, keyPEM, o.KeySealer); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{certFile: certPEM, caFile: caPEM} {
		if err := writeFile(path, data, publicFileMode); err != nil {
			t.Fatal(err)
		}
	}
}

func mustCerts(t *testing.T, pemData []byte) []*x509.Certificate {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(pemData)
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

func mustRoots(t *testing.T, caFile string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	return roots
}

// verifiedHandshake runs one handshake on loopback against cfg as a client
// that trusts caFile and asks for name, and returns the leaf served.
func verifiedHandshake(t *testing.T, cfg *tls.Config, caFile, name string) *x509.Certificate {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer conn.Close()
		served <- conn.(*tls.Conn).Handshake()
	}()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: dialTimeout}, "tcp", ln.Addr().String(),
		&tls.Config{RootCAs: mustRoots(t, caFile), ServerName: name})
	if err != nil {
		t.Fatalf("handshake for %s: %v", name, err)
	}
	defer conn.Close()
	if err := <-served; err != nil {
		t.Fatalf("server side of the handshake for %s: %v", name, err)
	}
	return conn.ConnectionState().PeerCertificates[0]
}

// A fresh generation serves an ECDSA P-256 key, whose certificate chains
// to the CA file for every name asked for, for server auth; the key file
// is 0600 and holds an "EC PRIVATE KEY", sealed with a state key.
func TestGeneratedServingIsECDSA(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sealed bool
	}{
		{"plaintext key", false},
		{"sealed key", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sealer KeySealer
			if tc.sealed {
				sealer = newKeySealer(t)
			}
			o, _ := generatedOptions(t, sealer, &bytes.Buffer{})
			cfg, caPath, err := ServerTLS(o, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			key, ok := cfg.Certificates[0].PrivateKey.(*ecdsa.PrivateKey)
			if !ok || key.Curve != elliptic.P256() {
				t.Fatalf("got serving key %T, want an ECDSA P-256 key", cfg.Certificates[0].PrivateKey)
			}
			mustHaveGeneratedModes(t, o.DataDir)
			mustECKeyFile(t, o.DataDir, sealer)
			mustVerifyEveryName(t, cfg.Certificates[0].Certificate[0], caPath)
		})
	}
}

// mustECKeyFile checks that the generated key file holds an "EC PRIVATE
// KEY", sealed with sealer unless it is nil.
func mustECKeyFile(t *testing.T, dataDir string, sealer KeySealer) {
	t.Helper()
	_, keyFile, _ := generatedPaths(dataDir)
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := isPEM(raw), sealer == nil; got != want {
		t.Fatalf("got a plaintext key file %v, want %v", got, want)
	}
	keyPEM, err := openGeneratedKey(raw, sealer)
	if err != nil {
		t.Fatal(err)
	}
	if block, _ := pem.Decode(keyPEM); block == nil || block.Type != "EC PRIVATE KEY" {
		t.Fatalf("got key file PEM %.30q, want an EC PRIVATE KEY", keyPEM)
	}
}

// mustVerifyEveryName verifies the leaf against caFile for each name of
// generatedFor, for server auth.
func mustVerifyEveryName(t *testing.T, leafDER []byte, caFile string) {
	t.Helper()
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{generatedFor.Host}
	for _, ip := range generatedFor.IPs {
		names = append(names, ip.String())
	}
	for _, name := range append(names, generatedFor.DNS...) {
		t.Run(name, func(t *testing.T) {
			opts := x509.VerifyOptions{Roots: mustRoots(t, caFile), DNSName: name,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			if _, err := leaf.Verify(opts); err != nil {
				t.Errorf("got %v, want the leaf verified for %s by the CA file", err, name)
			}
		})
	}
}

// The generated pair has certutil's names, validity and usages (less
// KeyEncipherment, which an ECDSA key has no use for), with ECDSA keys.
func TestGenerateServingMatchesCertutil(t *testing.T) {
	for _, host := range []string{"n1", "10.0.0.7"} {
		t.Run(host, func(t *testing.T) {
			gen, err := generateServing(host, generatedFor.IPs, generatedFor.DNS, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			wantPEM, _, err := certutil.GenerateSelfSignedCertKey(host, generatedFor.IPs, generatedFor.DNS)
			if err != nil {
				t.Fatal(err)
			}
			got, want := mustCerts(t, gen.cert), mustCerts(t, wantPEM)
			if len(got) != 2 || !bytes.Equal(mustCerts(t, gen.ca)[0].Raw, got[1].Raw) {
				t.Fatalf("got %d certificates, the CA file's last: %v; want the leaf then the CA file's", len(got), len(got) == 2)
			}
			for i, role := range []string{"serving", "CA"} {
				t.Run(role, func(t *testing.T) { compareCertutil(t, got[i], want[i]) })
			}
		})
	}
}

// compareCertutil compares a generated certificate with certutil's for the
// same names.
func compareCertutil(t *testing.T, got, want *x509.Certificate) {
	t.Helper()
	cn := func(c *x509.Certificate) string { name, _, _ := strings.Cut(c.Subject.CommonName, "@"); return name }
	skew := got.NotBefore.Sub(want.NotBefore).Abs() <= time.Minute
	for _, f := range []struct {
		field     string
		got, want any
	}{
		{"public key algorithm", got.PublicKeyAlgorithm, x509.ECDSA},
		{"signature algorithm", got.SignatureAlgorithm, x509.ECDSAWithSHA256},
		{"validity", got.NotAfter.Sub(got.NotBefore), want.NotAfter.Sub(want.NotBefore)},
		{"not before within a minute of certutil's", skew, true},
		{"key usage", got.KeyUsage, want.KeyUsage &^ x509.KeyUsageKeyEncipherment},
		{"ext key usage", got.ExtKeyUsage, want.ExtKeyUsage},
		{"is CA", got.IsCA, want.IsCA},
		{"basic constraints", got.BasicConstraintsValid, want.BasicConstraintsValid},
		{"common name", cn(got), cn(want)},
		{"DNS names", got.DNSNames, want.DNSNames},
		{"IPs", got.IPAddresses, want.IPAddresses},
	} {
		if g, w := fmt.Sprint(f.got), fmt.Sprint(f.want); g != w {
			t.Errorf("%s: got %s, want %s", f.field, g, w)
		}
	}
}

// A pair generated by an older version, with an RSA key, is kept and
// served (reloads included) while fresh and naming every address, and
// replaced by an ECDSA one when about to expire.
func TestGeneratedServingKeepsRSAPair(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		writeSealed, runSealed bool
	}{
		{"plaintext, no state key", false, false},
		{"sealed", true, true},
		{"plaintext, state key set since", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			o, clk := generatedOptions(t, nil, &log)
			sealer := newKeySealer(t)
			if tc.writeSealed {
				o.KeySealer = sealer
			}
			rsaLeaf := writeRSAPair(t, o)
			if tc.runSealed {
				o.KeySealer = sealer
			}
			cfg, caPath, err := ServerTLS(o, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cfg.Certificates[0].PrivateKey.(*rsa.PrivateKey); !ok {
				t.Fatalf("got serving key %T, want the RSA one kept", cfg.Certificates[0].PrivateKey)
			}
			clk.Step(tlsFileCheckInterval) // the next handshake reads the files again
			if got := verifiedHandshake(t, cfg, caPath, "localhost"); !got.Equal(rsaLeaf) {
				t.Errorf("got served serial %v, want the RSA pair's %v", got.SerialNumber, rsaLeaf.SerialNumber)
			}
			if strings.Contains(log.String(), "level=WARN") {
				t.Errorf("got warnings reading the files again: %s", log.String())
			}
			mustHaveGeneratedModes(t, o.DataDir)
			mustRenewAsECDSA(t, o)
		})
	}
}

// mustRenewAsECDSA checks that a generated pair about to expire is
// replaced by an ECDSA one.
func mustRenewAsECDSA(t *testing.T, o TLSOptions) {
	t.Helper()
	renewed, _, err := ServerTLS(o, time.Now().Add(generatedValidity))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := renewed.Certificates[0].PrivateKey.(*ecdsa.PrivateKey); !ok {
		t.Errorf("about to expire: got serving key %T, want a new ECDSA one", renewed.Certificates[0].PrivateKey)
	}
}

// writeRSAPair writes a certutil RSA pair for generatedFor where
// generatedServing keeps it, and returns its leaf.
func writeRSAPair(t *testing.T, o TLSOptions) *x509.Certificate {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(o.Host, o.IPs, o.DNS)
	if err != nil {
		t.Fatal(err)
	}
	certs := mustCerts(t, certPEM)
	caPEM, err := certutil.EncodeCertificates(certs[len(certs)-1])
	if err != nil {
		t.Fatal(err)
	}
	writeGenerated(t, o, certPEM, caPEM, keyPEM)
	return certs[0]
}

// A new ECDSA pair written over the generated files, its key sealed, is
// picked up by the next handshake after the check interval.
func TestGeneratedECDSAPairReloads(t *testing.T) {
	var log bytes.Buffer
	o, clk := generatedOptions(t, newKeySealer(t), &log)
	cfg, caPath, err := ServerTLS(o, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	gen, err := generateServing(o.Host, o.IPs, o.DNS, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	writeGenerated(t, o, gen.cert, gen.ca, gen.key)
	clk.Step(tlsFileCheckInterval)
	want := mustCerts(t, gen.cert)[0]
	if got := verifiedHandshake(t, cfg, caPath, "127.0.0.1"); !got.Equal(want) {
		t.Errorf("got served serial %v, want the rewritten pair's %v; log: %s", got.SerialNumber, want.SerialNumber, log.String())
	}
}
