package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"k8s.io/client-go/rest"
)

// writeClientCert writes a self-signed client certificate for cn and its
// key to certFile and keyFile, replacing them atomically as a kubelet's
// rotation does.
func writeClientCert(t *testing.T, certFile, keyFile, cn string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for path, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
}

// A rotated client certificate is used for the next connection to the
// cloud, without a restart.
func TestCloudCredentialsReloadedFromFiles(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // each request handshakes anew
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()

	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	writeClientCert(t, certFile, keyFile, "system:node:before")
	kc := filepath.Join(dir, "kubeconfig")
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + ", insecure-skip-tls-verify: true}}]\n" +
		"users: [{name: u, user: {client-certificate: " + certFile + ", client-key: " + keyFile + "}}]\n" +
		"contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cloudConfig(kc, link.NewConns(nil))
	if err != nil {
		t.Fatal(err)
	}
	useRotatingCredentials(cfg, slog.New(slog.DiscardHandler))
	client, err := restHTTPClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		resp, err := client.Get(srv.URL)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := get(); got != "system:node:before" {
		t.Fatalf("first request: server saw %q, want system:node:before", got)
	}
	writeClientCert(t, certFile, keyFile, "system:node:after")
	deadline := time.Now().Add(10 * time.Second)
	for got := get(); got != "system:node:after"; got = get() {
		if time.Now().After(deadline) {
			t.Fatalf("after rotating the files: server saw %q, want system:node:after", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func restHTTPClient(cfg *rest.Config) (*http.Client, error) { return rest.HTTPClientFor(cfg) }
