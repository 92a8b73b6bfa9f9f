//go:build e2e

package framework

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AddArgs appends flags to the node's apiserver-lite before its first
// Start.
func (n *Node) AddArgs(args ...string) {
	n.proc.Args = append(n.proc.Args, args...)
}

// WriteDoorKubeconfig writes a kubeconfig for the node's authenticated door
// (trusting its CA) with bearer token, as a system component on that node
// is given, and returns its path. The daemon must have started once.
func (n *Node) WriteDoorKubeconfig(name, token string) string {
	n.c.t.Helper()
	ca, err := os.ReadFile(filepath.Join(n.dataDir, "tls", "ca.crt"))
	if err != nil {
		n.c.t.Fatalf("read %s's CA: %v", n.Name, err)
	}
	const ctx = "e2e"
	path := filepath.Join(n.c.Dir, n.Name+"-"+name+".kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ctx] = &clientcmdapi.Cluster{Server: n.DoorURL, CertificateAuthorityData: ca}
	cfg.AuthInfos[ctx] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: ctx, AuthInfo: ctx}
	cfg.CurrentContext = ctx
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		n.c.t.Fatalf("write kubeconfig %s: %v", path, err)
	}
	return path
}

// StartHollowProxy starts a hollow kube-proxy for the node reading through
// kubeconfig (see Cluster.StartHollowProxy); it does not wait.
func (n *Node) StartHollowProxy(kubeconfig string) *Process {
	n.c.t.Helper()
	p := n.c.newProcess("kube-proxy-"+n.Name, n.c.Bins.Kubemark,
		"--morph", "proxy", "--name", n.Name, "--kubeconfig", kubeconfig, "--v="+hollowProxyVerbosity)
	n.c.startProcess(p)
	return p
}

// RunLog is p's log since its last start.
func RunLog(p *Process) (string, error) { return currentRunLog(p) }

// TokenConfig is a client config for the node's authenticated door with
// bearer token, trusting the daemon's CA. The daemon must have started
// once.
func (n *Node) TokenConfig(token string) (*rest.Config, error) {
	ca, err := os.ReadFile(filepath.Join(n.dataDir, "tls", "ca.crt"))
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: n.DoorURL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, nil
}

// RouteCloud points the node's apiserver-lite at server instead of the
// cloud (a proxy in front of it that must pass TLS through unchanged, as
// kube-apiserver's certificate is checked); it takes effect at the next
// Start.
func (n *Node) RouteCloud(server string) {
	n.c.t.Helper()
	kubeconfig := filepath.Join(n.c.Dir, "node-"+n.Name+".kubeconfig")
	if err := writeKubeconfig(kubeconfig, server, n.c.pki.CAPEM, &n.kubelet); err != nil {
		n.c.t.Fatalf("%v", err)
	}
}
