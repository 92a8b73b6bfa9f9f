//go:build e2e

package framework

import (
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// hollowProxyVerbosity is the klog level of the hollow kube-proxy: at 4 its
// endpoint-slice config logs every slice it hands the proxier ("Calling
// handler.OnEndpointSliceAdd"), which is how a test sees the slice arrive.
const hollowProxyVerbosity = "4"

// WriteDoorKubeconfig writes Dir/<name>.kubeconfig for apiserver-lite's
// authenticated door (DoorURL, trusting its CA) with bearer token, as a
// system component on the node is given, and returns its path. Call it
// after StartEdge, which creates the daemon's CA.
func (c *Cluster) WriteDoorKubeconfig(name, token string) string {
	c.t.Helper()
	const ctx = "e2e"
	path := filepath.Join(c.Dir, name+".kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ctx] = &clientcmdapi.Cluster{Server: c.DoorURL, CertificateAuthorityData: c.EdgeCA()}
	cfg.AuthInfos[ctx] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: ctx, AuthInfo: ctx}
	cfg.CurrentContext = ctx
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		c.t.Fatalf("write kubeconfig %s: %v", path, err)
	}
	return path
}

// StartHollowProxy starts a hollow kube-proxy (kubemark --morph proxy: the
// real service, endpoint-slice and serviceCIDR config controllers and their
// informers, a proxier that programs nothing) for NodeName, reading through
// kubeconfig. After its process is killed, a call starts it again with the
// same flags, as after a reboot; kubeconfig is then ignored. It does not
// wait; read HollowProxyLog.
func (c *Cluster) StartHollowProxy(kubeconfig string) {
	c.t.Helper()
	if c.proxy == nil {
		c.proxy = c.newProcess("kube-proxy", c.Bins.Kubemark,
			"--morph", "proxy",
			"--name", c.NodeName,
			"--kubeconfig", kubeconfig,
			"--v="+hollowProxyVerbosity,
		)
	}
	c.startProcess(c.proxy)
}

// HollowProxyProcess returns the hollow kube-proxy, or nil before
// StartHollowProxy.
func (c *Cluster) HollowProxyProcess() *Process {
	return c.proxy
}

// HollowProxyLog returns the hollow kube-proxy's log since its last start.
func (c *Cluster) HollowProxyLog() string {
	c.t.Helper()
	if c.proxy == nil {
		c.t.Fatalf("kube-proxy log: it was never started")
	}
	log, err := currentRunLog(c.proxy)
	if err != nil {
		c.t.Fatalf("kube-proxy log: %v", err)
	}
	return log
}
