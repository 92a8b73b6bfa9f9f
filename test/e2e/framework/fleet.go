//go:build e2e

package framework

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Node is one more edge node of a fleet sharing the cluster's cloud: its
// own node identity (CN=system:node:<Name>, O=system:nodes) and its own
// apiserver-lite, which talks to the cloud directly as the cluster's edge
// does.
type Node struct {
	c    *Cluster
	Name string
	// URL is its apiserver-lite's insecure door (health, metrics); DoorURL
	// its authenticated door, where LocalConfig acts as the node's kubelet.
	URL     string
	DoorURL string
	// kubelet is the node's client certificate; dataDir its daemon's state.
	kubelet keyPair
	dataDir string
	// CloudConfig authenticates to the cloud as the node itself, for a
	// client that reads as its kubelet would without apiserver-lite.
	CloudConfig *rest.Config
	proc        *Process
}

// AddNode issues node name's credentials and prepares its apiserver-lite,
// with its own data dir and port, without starting it.
func (c *Cluster) AddNode(name string) *Node {
	c.t.Helper()
	kp, err := c.pki.ca.issueClient(fmt.Sprintf(nodeUserFmt, name), nodeGroup)
	if err != nil {
		c.t.Fatalf("node %s credentials: %v", name, err)
	}
	kubeconfig := filepath.Join(c.Dir, "node-"+name+".kubeconfig")
	if err := writeKubeconfig(kubeconfig, c.CloudURL, c.pki.CAPEM, &kp); err != nil {
		c.t.Fatalf("%v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		c.t.Fatalf("load node %s kubeconfig: %v", name, err)
	}
	port, door := c.mustFleetPort(), c.mustFleetPort()
	n := &Node{c: c, Name: name, URL: "http://" + loopback(port), DoorURL: "https://" + loopback(door), CloudConfig: cfg,
		kubelet: kp, dataDir: filepath.Join(c.Dir, "data-"+name)}
	n.proc = c.newProcess("apiserver-lite-"+name, c.Bins.APIServerLite,
		"--kubeconfig", kubeconfig,
		"--data-dir", n.dataDir,
		"--listen-address", loopback(door),
		"--insecure-listen-address", loopback(port),
		"--node-name", name,
		"--log-level", "warn",
	)
	return n
}

// Start starts the node's apiserver-lite (again after Kill) without
// waiting for it; see WaitReady.
func (n *Node) Start() {
	n.c.t.Helper()
	n.c.startProcess(n.proc)
}

// WaitReady waits until the node's apiserver-lite answers /readyz.
func (n *Node) WaitReady(timeout time.Duration) error {
	return waitFor(n.c.t.Context(), n.proc, "apiserver-lite "+n.Name+" /readyz", timeout,
		httpOK(&http.Client{}, n.URL+"/readyz"))
}

// Kill sends SIGKILL to the node's apiserver-lite.
func (n *Node) Kill() {
	n.c.t.Helper()
	if err := n.proc.Kill(); err != nil {
		n.c.t.Fatalf("kill %s: %v", n.Name, err)
	}
}

// Process is the node's apiserver-lite process.
func (n *Node) Process() *Process { return n.proc }

// LocalConfig is a client config for the node's authenticated door as its
// kubelet: the node's client certificate and the daemon's CA. It needs the
// daemon to have started once (the CA is generated then).
func (n *Node) LocalConfig() (*rest.Config, error) {
	ca, err := os.ReadFile(filepath.Join(n.dataDir, "tls", "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read %s's CA: %w", n.Name, err)
	}
	return &rest.Config{Host: n.DoorURL, TLSClientConfig: rest.TLSClientConfig{CAData: ca,
		CertData: n.kubelet.CertPEM, KeyData: n.kubelet.KeyPEM}}, nil
}

// Fleet nodes listen on ports below the kernel's ephemeral range (32768
// and up on Linux), taken in turn from fleetPortBase: a port picked by
// binding :0 is an ephemeral one, which another daemon's outgoing
// connection to the cloud can take before the node binds it, and a fleet
// picks hundreds of them minutes before the last node starts.
const (
	fleetPortBase = 20000
	fleetPortEnd  = 32768
)

// mustFleetPort returns the next port from fleetPortBase that is free now.
func (c *Cluster) mustFleetPort() int {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nextFleetPort < fleetPortBase {
		c.nextFleetPort = fleetPortBase
	}
	for ; c.nextFleetPort < fleetPortEnd; c.nextFleetPort++ {
		ln, err := net.Listen("tcp", loopback(c.nextFleetPort))
		if err == nil {
			_ = ln.Close()
			c.nextFleetPort++
			return c.nextFleetPort - 1
		}
	}
	c.t.Fatalf("no free port between %d and %d for a fleet node", fleetPortBase, fleetPortEnd)
	return 0
}

// Metrics is the node's /metrics from its insecure door.
func (n *Node) Metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
