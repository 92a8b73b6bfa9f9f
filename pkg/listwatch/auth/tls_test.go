package auth

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestServerTLSGeneratesAndKeeps(t *testing.T) {
	dir := t.TempDir()
	o := TLSOptions{DataDir: dir, Host: "n1", DNS: []string{"localhost"}}
	now := time.Now()
	cfg, caPath, err := ServerTLS(o, now)
	if err != nil {
		t.Fatal(err)
	}
	if caPath != filepath.Join(dir, servingDir, servingCAFile) || cfg.ClientCAs != nil {
		t.Fatalf("got CA path %q, client CAs %v; want the generated CA and no client CAs", caPath, cfg.ClientCAs)
	}
	for _, name := range []string{servingCertFile, servingKeyFile, servingCAFile} {
		st, err := os.Stat(filepath.Join(dir, servingDir, name))
		if err != nil || st.Mode().Perm() != privateFileMode {
			t.Fatalf("%s: got %v, %v; want mode 0600", name, st, err)
		}
	}
	again, _, err := ServerTLS(o, now)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Certificates[0].Certificate[0]) != string(cfg.Certificates[0].Certificate[0]) {
		t.Fatal("got a new certificate on restart, want the persisted one")
	}
	renewed, _, err := ServerTLS(o, now.Add(365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if string(renewed.Certificates[0].Certificate[0]) == string(cfg.Certificates[0].Certificate[0]) {
		t.Fatal("kept a certificate about to expire, want a new one")
	}
	pem, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("CA file holds no certificate")
	}
	leaf, err := x509.ParseCertificate(renewed.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
		t.Fatalf("serving certificate does not chain to the CA file: %v", err)
	}
}

func TestServerTLSClientCA(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := ServerTLS(TLSOptions{DataDir: dir, ClientCAFile: filepath.Join(dir, "missing")}, time.Now()); err == nil {
		t.Fatal("got no error for a missing client-ca-file")
	}
	if _, _, err := ServerTLS(TLSOptions{DataDir: dir, CertFile: "x"}, time.Now()); err == nil {
		t.Fatal("got no error for a cert file without a key file")
	}
	_, caPath, err := ServerTLS(TLSOptions{DataDir: dir}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := ServerTLS(TLSOptions{DataDir: dir, ClientCAFile: caPath}, time.Now())
	if err != nil || cfg.ClientCAs == nil {
		t.Fatalf("got %v, %v; want client CAs from the file", cfg, err)
	}
}

func TestServerTLSRegeneratesForNewAddresses(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	o := TLSOptions{DataDir: dir, Host: "n1", DNS: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}
	if _, _, err := ServerTLS(o, now); err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, servingDir, servingCertFile)
	if !covers(certFile, o) {
		t.Fatalf("the generated certificate does not cover what it was made for")
	}
	o.IPs = append(o.IPs, net.IPv4(169, 254, 20, 10))
	if covers(certFile, o) {
		t.Fatalf("got covered for a new address, want not")
	}
	if _, _, err := ServerTLS(o, now); err != nil {
		t.Fatal(err)
	}
	if !covers(certFile, o) {
		t.Fatalf("after ServerTLS with a new address: the certificate does not name it")
	}
}
