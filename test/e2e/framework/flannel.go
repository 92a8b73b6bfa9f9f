//go:build e2e

package framework

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// FlannelNetwork is the cluster network flanneld's net-conf.json names.
const FlannelNetwork = "10.244.0.0/16"

// FlannelAddCommand is what flanneld's extension backend runs for each
// peer's subnet; flanneld logs "Ran command: " with it expanded.
const FlannelAddCommand = "echo flannel-peer-added $SUBNET $PUBLIC_IP"

// flannelNetConf is net-conf.json: the extension backend, which watches
// every Node's lease and runs a command per peer subnet, with no data path.
var flannelNetConf = fmt.Sprintf(`{"Network": %q, "Backend": {"Type": "extension", "SubnetAddCommand": %q}}`,
	FlannelNetwork, FlannelAddCommand)

// FlannelSubnetFile is where flanneld writes this node's subnet, under
// the cluster's dir (a tmpfs /run in a real node).
func (c *Cluster) FlannelSubnetFile() string { return filepath.Join(c.Dir, "flannel", "subnet.env") }

// StartFlanneld starts (or restarts) a real flanneld as this node's CNI
// agent: the kube subnet manager on kubeconfig (through apiserver-lite's
// door), the extension backend, no masquerade and no FORWARD rules, so the
// host's firewall is never touched.
func (c *Cluster) StartFlanneld(kubeconfig string) {
	c.t.Helper()
	if c.flanneld == nil {
		bin := c.Bins.Flanneld
		if err := checkExecutable(bin); err != nil {
			c.t.Fatalf("%v (build it with test/tools/build.sh)", err)
		}
		dir := filepath.Dir(c.FlannelSubnetFile())
		if err := os.MkdirAll(dir, 0o700); err != nil {
			c.t.Fatalf("flannel dir: %v", err)
		}
		conf := filepath.Join(dir, "net-conf.json")
		if err := os.WriteFile(conf, []byte(flannelNetConf), 0o600); err != nil {
			c.t.Fatalf("write net-conf.json: %v", err)
		}
		iface, ok := globalIPv4()
		if !ok {
			c.t.Skip("flanneld needs an interface with a global unicast IPv4 address (it never uses loopback); this host has none")
		}
		c.flanneld = c.newProcess("flanneld", bin, "--kube-subnet-mgr", "--kubeconfig-file="+kubeconfig,
			"--net-config-path="+conf, "--subnet-file="+c.FlannelSubnetFile(), "--iface="+iface.String(),
			"--ip-masq=false", "--iptables-forward-rules=false")
		c.flanneld.Env = []string{"NODE_NAME=" + c.NodeName}
	}
	c.startProcess(c.flanneld)
}

// FlanneldProcess returns flanneld's process, or nil before StartFlanneld.
func (c *Cluster) FlanneldProcess() *Process { return c.flanneld }

// globalIPv4 is an address of this host flanneld accepts as its public
// IP: global unicast IPv4. Nothing is sent to it.
func globalIPv4() (net.IP, bool) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP, true
		}
	}
	return nil, false
}
