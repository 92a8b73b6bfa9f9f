//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// wholeNodeAppNS is the namespace of the app pod that mounts a secret.
const wholeNodeAppNS = "wholenode-app"

// wholeNodeConfigMaps is how many ConfigMaps the operator's namespace
// holds besides kube-root-ca.crt.
const wholeNodeConfigMaps = 2

// nodePod is a pod's namespace and name.
type nodePod struct{ ns, name string }

// wholeNode is every component of one edge node: the system components'
// fixture, their door kubeconfigs, the operator's token and the pods the
// hollow kubelet runs.
type wholeNode struct {
	held                                  heldFixture
	proxyConfig, dnsConfig, flannelConfig string
	flannelToken, opToken                 string
	dns                                   string
	pods                                  []nodePod
}

// TestWholeNodeOffline runs a whole edge node through the daemon on the
// node's credentials against a Node,RBAC + NodeRestriction cloud: the
// hollow kubelet (node scope), a hollow kube-proxy and CoreDNS (cluster-
// wide holdings for their pods), flanneld (Nodes held whole for it) and an
// operator's informers (holdings in its namespace), each on its own
// identity. Online all of them work; then the cloud stops, flanneld's
// subnet file is removed, everything restarts at once, and within
// componentSyncTimeout of the restarts, all running together, the kubelet
// runs its pods again, kube-proxy syncs, CoreDNS resolves, flanneld
// writes its subnet and learns its peer, and the operator's informers
// sync with the same objects.
func TestWholeNodeOffline(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true,
		Namespaces: []string{systemNS, heldNS, flannelNS, operatorNS, wholeNodeAppNS}})
	n := createWholeNode(t, c)
	c.StartEdge()
	n.proxyConfig = c.WriteDoorKubeconfig("kube-proxy", n.held.proxyToken)
	n.dnsConfig = c.WriteDoorKubeconfig("coredns", n.held.dnsToken)
	n.flannelConfig = c.WriteDoorKubeconfig("flannel", n.flannelToken)
	n.start(c)
	c.WaitNodeReady()
	var online operatorView

	t.Run("online", func(t *testing.T) {
		for _, p := range n.pods {
			waitPodRunning(t, c, p.ns, p.name)
		}
		waitProxySynced(t, c, n.held)
		waitResolves(t, c, n.dns, n.held)
		waitFlannelUp(t, c, 0)
		online = syncOperator(t, c, operatorNS, n.opToken)
		if len(online.configMaps) != wholeNodeConfigMaps+1 || !slices.Equal(online.widgets, []string{"small"}) {
			t.Errorf("operator online: got %+v, want %d configmaps and widget small", online, wholeNodeConfigMaps+1)
		}
	})
	if t.Failed() {
		return
	}
	t.Run("reboot with the cloud stopped", func(t *testing.T) { n.rebootOffline(t, c, online) })
}

// createWholeNode creates this node and a flannel peer, kube-proxy's,
// CoreDNS's and flannel's service accounts and pods, the operator's
// namespace (ConfigMaps, a widget, its Role and pod) and an app pod that
// mounts a secret.
func createWholeNode(t *testing.T, c *framework.Cluster) *wholeNode {
	t.Helper()
	createFlannelNodes(t, c)
	n := &wholeNode{held: createHeldComponents(t, c), flannelToken: createFlannelAgent(t, c)}
	createWidgetsCRD(t, c)
	createConfigMaps(t, c, operatorNS, "op", wholeNodeConfigMaps)
	createWidget(t, c, operatorNS, "small")
	n.opToken = namespacedReaderToken(t, c, operatorNS, "operator")
	app := createSecretAppPod(t, c, wholeNodeAppNS)
	n.pods = []nodePod{
		{systemNS, n.held.proxyPod}, {systemNS, "coredns-" + c.NodeName}, {heldNS, "tenant"},
		{flannelNS, "kube-flannel-ds-" + c.NodeName}, {operatorNS, "operator-" + c.NodeName}, {wholeNodeAppNS, app},
	}
	return n
}

// start starts (or restarts) the hollow kubelet, kube-proxy, CoreDNS and
// flanneld, without waiting.
func (n *wholeNode) start(c *framework.Cluster) {
	c.StartKubemark()
	c.StartHollowProxy(n.proxyConfig)
	n.dns = c.StartCoreDNS(n.dnsConfig)
	c.StartFlanneld(n.flannelConfig)
}

// processes are the node's processes, the daemon first.
func (n *wholeNode) processes(c *framework.Cluster) []*framework.Process {
	return []*framework.Process{c.EdgeProcess(), c.KubemarkProcess(), c.HollowProxyProcess(), c.CoreDNSProcess(), c.FlanneldProcess()}
}

// rebootOffline stops the cloud, powers the node off, restarts every
// component and the operator's informers, and wants each working within
// componentSyncTimeout of the restarts.
func (n *wholeNode) rebootOffline(t *testing.T, c *framework.Cluster, online operatorView) {
	c.StopCloud()
	n.powerOff(t, c)
	c.StartEdge()
	logged := len(flanneldLog(t, c))
	restarted := time.Now()
	n.start(c)
	op := startOperator(c, operatorNS, n.opToken)
	defer op.stop()

	step := func(what string, wait func()) {
		wait()
		d := time.Since(restarted)
		t.Logf("%s %s after the restarts", what, d.Round(time.Second))
		if d > componentSyncTimeout {
			t.Errorf("%s %s after the restarts, want within %s", what, d, componentSyncTimeout)
		}
	}
	step("the kubelet runs its pods", func() { waitKubeletRunsPods(t, c, n.pods) })
	step("kube-proxy synced", func() { waitProxySynced(t, c, n.held) })
	step("CoreDNS resolves", func() { waitResolves(t, c, n.dns, n.held) })
	step("flanneld is up", func() { waitFlannelUp(t, c, logged) })
	step("the operator synced", func() {
		if got := op.waitSynced(t, c); !slices.Equal(got.configMaps, online.configMaps) || !slices.Equal(got.widgets, online.widgets) {
			t.Errorf("operator offline: got %+v, want the online objects %+v", got, online)
		}
	})
	time.Sleep(flannelSettle)
	n.checkRunning(t, c)
}

// powerOff kills every component, then the daemon, and removes flanneld's
// subnet file (a tmpfs /run at a reboot).
func (n *wholeNode) powerOff(t *testing.T, c *framework.Cluster) {
	t.Helper()
	for _, p := range n.processes(c)[1:] {
		if err := p.Kill(); err != nil {
			t.Fatalf("kill %s: %v", p.Name, err)
		}
	}
	if err := os.Remove(c.FlannelSubnetFile()); err != nil {
		t.Fatalf("remove the subnet file: %v", err)
	}
	c.KillEdge()
}

// checkRunning wants none of the node's processes exited.
func (n *wholeNode) checkRunning(t *testing.T, c *framework.Cluster) {
	t.Helper()
	for _, p := range n.processes(c) {
		select {
		case <-p.Exited():
			t.Errorf("%s exited: %v\n%s", p.Name, p.ExitErr(), p.Tail(30))
		default:
		}
	}
}

// waitKubeletRunsPods waits until the hollow kubelet's current run has
// logged kubeletRestartedLogs and started a container of each of pods,
// within componentSyncTimeout.
func waitKubeletRunsPods(t *testing.T, c *framework.Cluster, pods []nodePod) {
	t.Helper()
	started := make([]*regexp.Regexp, 0, len(pods))
	for _, p := range pods {
		started = append(started, regexp.MustCompile(`"SyncLoop \(PLEG\): event for pod" pod="`+
			regexp.QuoteMeta(p.ns+"/"+p.name)+`" event=.*"Type":"ContainerStarted"`))
	}
	_, err := eventually(t.Context(), componentSyncTimeout, func() (string, error) {
		log := c.KubemarkLog()
		for _, want := range kubeletRestartedLogs {
			if !strings.Contains(log, want) {
				return "", fmt.Errorf("kubemark has not logged %s", want)
			}
		}
		for i, re := range started {
			if !re.MatchString(log) {
				return "", fmt.Errorf("kubemark has not started pod %s/%s", pods[i].ns, pods[i].name)
			}
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("kubelet offline: %v\n%s", err, tail(c.KubemarkLog(), 40))
	}
}
