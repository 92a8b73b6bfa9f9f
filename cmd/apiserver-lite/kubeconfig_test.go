package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/kubeconfig"
	"k8s.io/client-go/tools/clientcmd"
)

// testCertValidity is how long the test certificates are valid.
const testCertValidity = time.Hour

// clientPKI is a CA and a client certificate it issued, as PEM files.
type clientPKI struct {
	caFile, certFile, keyFile string
	certPEM, keyPEM           []byte
}

// mustClientPKI writes a CA and a client certificate for user cn into dir.
func mustClientPKI(t *testing.T, dir, cn string) clientPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(testCertValidity), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(testCertValidity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := clientPKI{caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "client.crt"), keyFile: filepath.Join(dir, "client.key"),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
	mustWriteAt(t, p.caFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})))
	mustWriteAt(t, p.certFile, string(p.certPEM))
	mustWriteAt(t, p.keyFile, string(p.keyPEM))
	return p
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func mustWriteAt(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// kubeletKubeconfig is a kubelet.conf whose user is given as YAML.
func kubeletKubeconfig(user string) string {
	return "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://cloud.example:6443\"}}]\n" +
		"users: [{name: kubelet, user: " + user + "}]\n" +
		"contexts: [{name: k, context: {cluster: c, user: kubelet}}]\ncurrent-context: k\n"
}

// kubeconfigEnv is a node with the kubelet's credentials and a daemon that
// generated its serving certificate.
type kubeconfigEnv struct {
	dir, dataDir, config, kubelet string
	pki                           clientPKI
	listen                        string
}

// newKubeconfigEnv writes the kubelet's kubeconfig (with client
// certificate paths relative to it), the daemon's config, and the daemon's
// generated serving certificate for 127.0.0.1.
func newKubeconfigEnv(t *testing.T, listen string) kubeconfigEnv {
	t.Helper()
	dir := t.TempDir()
	e := kubeconfigEnv{dir: dir, dataDir: filepath.Join(dir, "data"), config: filepath.Join(dir, "config.yaml"),
		kubelet: filepath.Join(dir, "kubernetes", "kubelet.conf"), listen: listen}
	e.pki = mustClientPKI(t, filepath.Join(dir, "kubernetes", "pki"), "system:node:n1")
	mustWriteAt(t, e.kubelet, kubeletKubeconfig("{client-certificate: pki/client.crt, client-key: pki/client.key}"))
	mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+e.dataDir+"\nlisten-address: \""+listen+"\"\n")
	return e
}

// mustServe generates the daemon's serving certificate as the daemon does
// and returns the CA path it reports.
func (e kubeconfigEnv) mustServe(t *testing.T) string {
	t.Helper()
	_, caPath, err := door.ServerTLS(door.TLSOptions{DataDir: e.dataDir, Host: "n1", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return caPath
}

func TestKubeconfigFromKubeletPaths(t *testing.T) {
	e := newKubeconfigEnv(t, "0.0.0.0:10550")
	mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+e.dataDir+"\nlisten-address: 0.0.0.0:10550\ninsecure-allow-remote: true\n")
	caPath := e.mustServe(t)
	out := filepath.Join(e.dir, "admin.conf")
	mustWriteAt(t, out, "stale")
	if err := os.Chmod(out, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCommand(t, "kubeconfig", "--kubelet-kubeconfig", e.kubelet, "--config", e.config, "--output", out); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != kubeconfig.FileMode {
		t.Fatalf("output: got %v %v, want mode 0600", st, err)
	}
	kc, err := clientcmd.LoadFromFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cl, user := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster], kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
	if cl.Server != "https://127.0.0.1:10550" || cl.CertificateAuthority != caPath {
		t.Errorf("cluster: got server %q, CA %q; want https://127.0.0.1:10550 and %s", cl.Server, cl.CertificateAuthority, caPath)
	}
	if user.ClientCertificate != e.pki.certFile || user.ClientKey != e.pki.keyFile {
		t.Errorf("user: got %q and %q, want the kubelet's files %s and %s", user.ClientCertificate, user.ClientKey, e.pki.certFile, e.pki.keyFile)
	}
}

func TestKubeconfigFromKubeletData(t *testing.T) {
	e := newKubeconfigEnv(t, "127.0.0.1:12345")
	e.mustServe(t)
	mustWriteAt(t, e.kubelet, kubeletKubeconfig(
		`{client-certificate-data: "`+b64(e.pki.certPEM)+`", client-key-data: "`+b64(e.pki.keyPEM)+`"}`))
	got, err := runCommand(t, "kubeconfig", "--kubelet-kubeconfig", e.kubelet, "--config", e.config)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	kc, err := clientcmd.Load([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	user := kc.AuthInfos[kubeconfig.LocalName]
	if user == nil || string(user.ClientCertificateData) != string(e.pki.certPEM) || string(user.ClientKeyData) != string(e.pki.keyPEM) {
		t.Errorf("user: got %+v, want the kubelet's embedded certificate and key", user)
	}
	if s := kc.Clusters[kubeconfig.LocalName].Server; s != "https://127.0.0.1:12345" {
		t.Errorf("server: got %q, want https://127.0.0.1:12345", s)
	}
}

func TestKubeconfigRefuses(t *testing.T) {
	tests := []struct {
		name    string
		noServe bool                                          // the daemon never generated its certificate
		setup   func(t *testing.T, e *kubeconfigEnv) []string // extra args
		want    string
	}{
		{"token user", false, func(t *testing.T, e *kubeconfigEnv) []string {
			mustWriteAt(t, e.kubelet, kubeletKubeconfig("{token: abc}"))
			return nil
		}, "no client certificate and key"},
		{"key of another certificate", false, func(t *testing.T, e *kubeconfigEnv) []string {
			other := mustClientPKI(t, filepath.Join(e.dir, "other"), "x")
			mustWriteAt(t, e.pki.keyFile, string(other.keyPEM))
			return nil
		}, "client certificate and key"},
		{"missing kubelet kubeconfig", false, func(t *testing.T, e *kubeconfigEnv) []string {
			return []string{"--kubelet-kubeconfig", filepath.Join(e.dir, "absent.conf")}
		}, "no such file"},
		{"daemon never generated its CA", true, func(t *testing.T, e *kubeconfigEnv) []string {
			return nil
		}, "the daemon generates it"},
		{"operator's serving certificate", false, func(t *testing.T, e *kubeconfigEnv) []string {
			mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+e.dataDir+"\ntls-cert-file: /etc/x.crt\ntls-private-key-file: /etc/x.key\n")
			return nil
		}, "pass --certificate-authority"},
		{"not a CA file", false, func(t *testing.T, e *kubeconfigEnv) []string {
			return []string{"--certificate-authority", e.config}
		}, "certificate authority"},
		{"door off", false, func(t *testing.T, e *kubeconfigEnv) []string {
			mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+e.dataDir+"\nlisten-address: \"\"\nsecure-listen-address: 127.0.0.1:10551\n")
			return nil
		}, "local door is off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newKubeconfigEnv(t, "127.0.0.1:10550")
			if !tt.noServe {
				e.mustServe(t)
			}
			args := append([]string{"kubeconfig", "--kubelet-kubeconfig", e.kubelet, "--config", e.config}, tt.setup(t, &e)...)
			out, err := runCommand(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || out != "" {
				t.Errorf("got %v and output %q, want an error containing %q and no output", err, out, tt.want)
			}
		})
	}
}

// With --certificate-authority the operator's CA is used, whatever
// tls-cert-file is.
func TestKubeconfigCertificateAuthorityFlag(t *testing.T) {
	e := newKubeconfigEnv(t, "127.0.0.1:10550")
	mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+e.dataDir+"\ntls-cert-file: /etc/x.crt\ntls-private-key-file: /etc/x.key\n")
	got, err := runCommand(t, "kubeconfig", "--kubelet-kubeconfig", e.kubelet, "--config", e.config, "--certificate-authority", e.pki.caFile)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	kc, err := clientcmd.Load([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if ca := kc.Clusters[kubeconfig.LocalName].CertificateAuthority; ca != e.pki.caFile {
		t.Errorf("CA: got %q, want %q", ca, e.pki.caFile)
	}
}

// The CA path the subcommand assumes is where the daemon generates it.
func TestGeneratedCAPathMatchesTheDaemon(t *testing.T) {
	dir := t.TempDir()
	_, caPath, err := door.ServerTLS(door.TLSOptions{DataDir: dir, Host: "n1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, kubeconfig.GeneratedCAPath); caPath != want {
		t.Errorf("got %q, want %q", caPath, want)
	}
}
