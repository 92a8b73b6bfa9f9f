//go:build e2e

package framework

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// edgeReadyTimeout bounds apiserver-lite's start until its /readyz is OK,
// including the initial list of every synced resource from the cloud.
const edgeReadyTimeout = time.Minute

// StartEdge starts apiserver-lite with its cloud kubeconfig, data dir
// Dir/edge-data and EdgeURL's port, and waits until its /readyz is OK. After
// KillEdge it restarts the daemon on the same data dir and port.
func (c *Cluster) StartEdge() {
	c.t.Helper()
	if c.edge == nil {
		c.edge = c.newProcess("apiserver-lite", c.Bins.APIServerLite, c.edgeArgs()...)
		if c.opts.HeldSockets {
			c.holdEdgeSockets(c.edge, loopback(c.DoorPort), loopback(c.EdgePort))
		}
	}
	c.startProcess(c.edge)
	check := httpOK(&http.Client{}, c.EdgeURL+"/readyz")
	if err := waitFor(c.t.Context(), c.edge, "apiserver-lite /readyz", edgeReadyTimeout, check); err != nil {
		c.t.Fatalf("%v\n%s", err, c.edge.Tail(logTailLines))
	}
	if err := writeKubeconfig(c.KubeletKubeconfig, c.DoorURL, c.EdgeCA(), &c.pki.kubelet); err != nil {
		c.t.Fatalf("%v", err)
	}
}

// EdgeCA is the CA of apiserver-lite's generated serving certificate, which
// a client of its TLS doors trusts.
func (c *Cluster) EdgeCA() []byte {
	c.t.Helper()
	ca, err := os.ReadFile(filepath.Join(c.Dir, "edge-data", "tls", "ca.crt"))
	if err != nil {
		c.t.Fatalf("read apiserver-lite's CA: %v", err)
	}
	return ca
}

// DoorConfig returns a client config for apiserver-lite's authenticated
// door (DoorURL) that trusts its CA and carries no credentials; set a
// bearer token or a client certificate on it.
func (c *Cluster) DoorConfig() *rest.Config {
	return &rest.Config{Host: c.DoorURL, TLSClientConfig: rest.TLSClientConfig{CAData: c.EdgeCA()}}
}

// KubeletConfig returns a client config for the authenticated door as the
// node (its own client certificate), as the kubelet uses it.
func (c *Cluster) KubeletConfig() *rest.Config {
	cfg := c.DoorConfig()
	cfg.CertData, cfg.KeyData = c.pki.kubelet.CertPEM, c.pki.kubelet.KeyPEM
	return cfg
}

// edgeArgs are apiserver-lite's documented flags for this cluster.
func (c *Cluster) edgeArgs() []string {
	args := []string{
		"--kubeconfig", c.EdgeCloudKubeconfig,
		"--data-dir", c.EdgeDataDir(),
		"--listen-address", loopback(c.DoorPort),
		"--insecure-listen-address", loopback(c.EdgePort),
		"--node-name", c.NodeName,
	}
	if !c.opts.NodeCredentials {
		args = append(args, "--sync-scope", "cluster") // the edge's own user, with cluster-scope RBAC
	}
	if c.EncryptionKeyFile != "" {
		args = append(args, "--encryption-key-file", c.EncryptionKeyFile)
	}
	if c.opts.WatchCacheSize > 0 {
		args = append(args, "--watch-cache-size", strconv.Itoa(c.opts.WatchCacheSize))
	}
	return append(args, c.opts.EdgeArgs...)
}

// KillEdge sends SIGKILL to apiserver-lite, as in a node crash.
func (c *Cluster) KillEdge() {
	c.t.Helper()
	if c.edge == nil {
		c.t.Fatalf("kill edge: apiserver-lite was never started")
	}
	if err := c.edge.Kill(); err != nil {
		c.t.Fatalf("kill edge: %v", err)
	}
}

// EdgeProcess returns the apiserver-lite process, or nil before StartEdge.
func (c *Cluster) EdgeProcess() *Process {
	return c.edge
}

// EdgeConfig returns a client config for apiserver-lite's local API.
func (c *Cluster) EdgeConfig() *rest.Config {
	return &rest.Config{Host: c.EdgeURL}
}

// EdgeClient returns a clientset talking to apiserver-lite's local API.
func (c *Cluster) EdgeClient() kubernetes.Interface {
	c.t.Helper()
	cs, err := kubernetes.NewForConfig(c.EdgeConfig())
	if err != nil {
		c.t.Fatalf("edge clientset: %v", err)
	}
	return cs
}

// CloudProcesses returns the kube-apiserver and etcd processes, for
// resource accounting by benchmarks.
func (c *Cluster) CloudProcesses() (apiserver, etcd *Process) {
	return c.apiserver, c.etcd
}
