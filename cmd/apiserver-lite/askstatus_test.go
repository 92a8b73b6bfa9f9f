package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/kubeconfig"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// nodeUser is the client certificate's user the test door admits.
const nodeUser = "system:node:n1"

// startAuthenticatedDoor serves the status document over TLS with the
// daemon's generated serving certificate, answering 401 to any client
// without a certificate for nodeUser chained to clientCA.
func startAuthenticatedDoor(t *testing.T, dataDir, clientCA string) *httptest.Server {
	t.Helper()
	cfg, _, err := door.ServerTLS(door.TLSOptions{DataDir: dataDir, ClientCAFile: clientCA, Host: "n1", DNS: []string{"localhost"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+operations.PathStatus, func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != nodeUser {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
			return
		}
		_ = json.NewEncoder(w).Encode(operations.Status{Source: "daemon", Node: "n1", Link: "up", Resources: []operations.ResourceStatus{}})
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = cfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// localhostAddress is srv's address by the name its generated certificate
// holds.
func localhostAddress(srv *httptest.Server) string {
	return strings.Replace(srv.Listener.Addr().String(), "127.0.0.1", "localhost", 1)
}

// status --kubeconfig reads the authenticated door with the kubeconfig
// `apiserver-lite kubeconfig` writes from the kubelet's credentials.
func TestStatusThroughAuthenticatedDoor(t *testing.T) {
	e := newKubeconfigEnv(t, "127.0.0.1:10550")
	srv := startAuthenticatedDoor(t, e.dataDir, e.pki.caFile)
	mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+e.dataDir+"\nlisten-address: "+localhostAddress(srv)+"\n")
	kc := filepath.Join(e.dir, "local.conf")
	if _, err := runCommand(t, "kubeconfig", "--kubelet-kubeconfig", e.kubelet, "--config", e.config, "--output", kc); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	out, err := runCommand(t, "status", "--kubeconfig", kc, "-o", "json")
	if err != nil {
		t.Fatalf("status --kubeconfig: %v", err)
	}
	var doc operations.Status
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Node != "n1" || doc.Link != "up" {
		t.Fatalf("status --kubeconfig: got %v %q, want the daemon's status", err, out)
	}

	untrusting := mustRewriteKubeconfig(t, kc, func(c *clientcmdapi.Config) { c.Clusters[kubeconfig.LocalName].CertificateAuthority = "" })
	tokenOnly := mustRewriteKubeconfig(t, kc, func(c *clientcmdapi.Config) { c.AuthInfos[kubeconfig.LocalName] = &clientcmdapi.AuthInfo{Token: "t"} })
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"door not trusted", []string{"--kubeconfig", untrusting}, "certificate signed by unknown authority"},
		{"no client certificate", []string{"--kubeconfig", tokenOnly}, "the server has asked for the client to provide credentials"},
		{"plain HTTP to the HTTPS door", []string{"--address", srv.Listener.Addr().String()}, "it serves HTTPS; pass --kubeconfig"},
		{"both doors named", []string{"--kubeconfig", kc, "--address", "127.0.0.1:1"}, "none of the others can be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runCommand(t, append([]string{"status"}, tt.args...)...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// mustRewriteKubeconfig writes a changed copy of the kubeconfig at path.
func mustRewriteKubeconfig(t *testing.T, path string, change func(*clientcmdapi.Config)) string {
	t.Helper()
	c, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	change(c)
	out := filepath.Join(t.TempDir(), "changed.conf")
	if err := clientcmd.WriteToFile(*c, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The kubeconfig `apiserver-lite kubeconfig` writes from the kubelet's
// credentials reads the daemon's status through its HTTPS door, which
// trusts the kubelet's CA, while the cloud is unreachable.
func TestStatusThroughTheDaemonsDoor(t *testing.T) {
	e := newKubeconfigEnv(t, "127.0.0.1:10550")
	addr := mustFreeAddress(t)
	d := startOfflineDaemon(t, "--listen-address", addr, "--client-ca-file", e.pki.caFile, "--sync-scope", "node")
	mustWriteAt(t, e.config, "node-name: n1\ndata-dir: "+d.data+"\nlisten-address: "+addr+"\n")
	kc := filepath.Join(e.dir, "local.conf")
	if _, err := runCommand(t, "kubeconfig", "--kubelet-kubeconfig", e.kubelet, "--config", e.config, "--output", kc); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	out, err := runCommand(t, "status", "--kubeconfig", kc, "-o", "json")
	var doc operations.Status
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || doc.Node != "n1" || doc.Link != "down" {
		t.Fatalf("status --kubeconfig: got %v %q, want the offline daemon's status", err, out)
	}
	for path, want := range map[string]os.FileMode{kubeconfig.GeneratedCAPath: 0o644, filepath.Dir(kubeconfig.GeneratedCAPath): 0o755} {
		if st, err := os.Stat(filepath.Join(d.data, path)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: got %v %v, want mode %#o", path, st, err, want)
		}
	}
	anonymous := mustRewriteKubeconfig(t, kc, func(c *clientcmdapi.Config) { c.AuthInfos[kubeconfig.LocalName] = &clientcmdapi.AuthInfo{} })
	if _, err := runCommand(t, "status", "--kubeconfig", anonymous); err == nil || !strings.Contains(err.Error(), "Unauthorized (401)") {
		t.Errorf("status without credentials: got %v, want Unauthorized (401)", err)
	}
	if _, err := runCommand(t, "status", "--address", addr); err == nil || !strings.Contains(err.Error(), "it serves HTTPS") {
		t.Errorf("status over plain HTTP: got %v, want a pointer to --kubeconfig", err)
	}
}
