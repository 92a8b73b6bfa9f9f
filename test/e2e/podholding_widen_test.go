//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// flannelNS is kube-flannel's namespace, allowed by pod-identity-owners
// by default.
const flannelNS = "kube-flannel"

// peerNode is a second Node carrying a peer's flannel annotations.
const peerNode = "edge-peer"

// flannelClusterRole is kube-flannel's ClusterRole (kube-flannel.yml).
var flannelClusterRole = rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "flannel"},
	Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
	},
}

// readyWholeNodes is the /readyz name of Nodes held whole for pods
// beside the node's own.
const readyWholeNodes = "nodes@cluster"

// TestNodesWidenedForCNIAgent: a CNI agent's informer on every Node (as
// flannel's kube subnet manager runs one), on a pod-bound token of
// kube-flannel's service account with kube-flannel's ClusterRole, reads
// through the pods' door of a daemon on the node's credentials, with a
// second Node carrying a peer's flannel annotations and podCIDR. Online
// it sees both Nodes, held whole for the agent beside the node's own
// Node; after a restart with the cloud stopped it sees both again. The
// node's identity still never gets a list of Nodes answered with its
// own alone: offline it is 503, or a Table with a Warning.
func TestNodesWidenedForCNIAgent(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{flannelNS}})
	token := createFlannelFixture(t, c)
	c.StartEdge()
	kubeconfig := c.WriteDoorKubeconfig("flannel", token)
	want := []string{peerNode, c.NodeName}
	slices.Sort(want)

	t.Run("online", func(t *testing.T) {
		waitInformerNodes(t, kubeconfig, want)
		line := readyzLine(readyzVerbose(t, c), readyWholeNodes)
		if !strings.Contains(line, "synced as "+flannelNS+"/flannel (pod ") {
			t.Errorf("/readyz?verbose: got %q, want Nodes held whole, synced as %s/flannel", line, flannelNS)
		}
	})
	t.Run("reboot with the cloud stopped", func(t *testing.T) {
		c.StopCloud()
		c.KillEdge()
		c.StartEdge()
		waitInformerNodes(t, kubeconfig, want)
		checkNodesViewOffline(t, c)
	})
}

// createFlannelFixture creates this node and the peer Node (podCIDR and
// flannel's annotations), kube-flannel's ClusterRole bound to service
// account kube-flannel/flannel, a pod of it bound to the node, and returns
// a token bound to that pod.
func createFlannelFixture(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	createFlannelNodes(t, c)
	return createFlannelAgent(t, c)
}

// createFlannelNodes creates this node (its podCIDR) and the peer Node
// (podCIDR and flannel's annotations).
func createFlannelNodes(t *testing.T, c *framework.Cluster) {
	t.Helper()
	ctx := t.Context()
	for _, n := range []*corev1.Node{
		// A kubelet annotates its Node; flanneld assumes annotations exist.
		{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName, Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
			Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"}},
		{ObjectMeta: metav1.ObjectMeta{Name: peerNode, Annotations: map[string]string{
			"flannel.alpha.coreos.com/backend-type":        "extension",
			"flannel.alpha.coreos.com/backend-data":        "null",
			"flannel.alpha.coreos.com/kube-subnet-manager": "true",
			"flannel.alpha.coreos.com/public-ip":           "192.0.2.7",
		}}, Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"}},
	} {
		mustCreate(t, func() error {
			_, err := c.Admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			return err
		})
	}
}

// createFlannelAgent creates kube-flannel's ClusterRole bound to service
// account kube-flannel/flannel and a pod of it bound to the node, and
// returns a token bound to that pod.
func createFlannelAgent(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().ClusterRoles().Create(ctx, &flannelClusterRole, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "flannel"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: flannelClusterRole.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "flannel", Namespace: flannelNS}}}, metav1.CreateOptions{})
		return err
	})
	return componentToken(t, c, flannelNS, "flannel", "kube-flannel-ds-"+c.NodeName, "ghcr.io/flannel-io/flannel:v0.28.4")
}

// waitInformerNodes runs a client-go informer on every Node with
// kubeconfig until its store holds exactly want (sorted names), within
// componentSyncTimeout.
func waitInformerNodes(t *testing.T, kubeconfig string, want []string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), componentSyncTimeout)
	defer cancel()
	factory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(cfg), 0)
	nodes := factory.Core().V1().Nodes().Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), nodes.HasSynced) {
		t.Fatalf("the Nodes informer did not sync within %s", componentSyncTimeout)
	}
	_, err = eventually(ctx, componentSyncTimeout, func() (string, error) {
		got := nodes.GetStore().ListKeys()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return "", fmt.Errorf("got Nodes %v, want %v", got, want)
		}
		return "", nil
	})
	if err != nil {
		t.Error(err)
	}
}

// checkNodesViewOffline wants the node's own list of every Node, offline,
// never answered with its own Node as a list: 503, and a Table with a
// Warning; its own Node is still served.
func checkNodesViewOffline(t *testing.T, c *framework.Cluster) {
	t.Helper()
	resp, body := edgeRawRequest(t, http.MethodGet, c.EdgeURL+"/api/v1/nodes", "", "")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the node's list of every Node offline: got %d %.300s, want 503", resp.StatusCode, body)
	}
	resp, body = edgeRawRequest(t, http.MethodGet, c.EdgeURL+"/api/v1/nodes/"+c.NodeName, "", "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), peerNode) {
		t.Errorf("the node's own Node offline: got %d %.300s, want it alone", resp.StatusCode, body)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, c.EdgeURL+"/api/v1/nodes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	tbl, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Body.Close()
	b, _ := io.ReadAll(tbl.Body)
	if tbl.StatusCode != http.StatusOK || !strings.Contains(string(b), `"`+c.NodeName+`"`) || strings.Contains(string(b), peerNode) ||
		!strings.Contains(tbl.Header.Get("Warning"), "limited to the synced") {
		t.Errorf("the node's Table of every Node offline: got %d, Warning %q, %.300s; want its own Node with the Warning",
			tbl.StatusCode, tbl.Header.Get("Warning"), b)
	}
}

// flannelSubnet is what flanneld writes for this node (its podCIDR's
// first address), and peerSubnet the peer's podCIDR.
const (
	flannelSubnet = "FLANNEL_SUBNET=10.244.0.1/24"
	peerSubnet    = "10.244.1.0/24"
)

// TestFlannelThroughTheDoor runs a real flanneld (the kube subnet
// manager, the extension backend that watches every Node) through the
// pods' door on a pod-bound token of kube-flannel's service account, with
// the daemon on the node's credentials and a peer Node carrying flannel's
// annotations. Online it writes this node's subnet file and runs the add
// command for the peer's subnet; then the cloud stops, the subnet file is
// removed (as a tmpfs /run is at a reboot), the daemon and flanneld
// restart, and within 2 minutes flanneld writes the subnet again, runs the
// peer's add command again and keeps running.
func TestFlannelThroughTheDoor(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{flannelNS}})
	token := createFlannelFixture(t, c)
	c.StartEdge()
	kubeconfig := c.WriteDoorKubeconfig("flannel", token)
	c.StartFlanneld(kubeconfig)
	t.Run("online", func(t *testing.T) { waitFlannelUp(t, c, 0) })

	c.StopCloud()
	if err := c.FlanneldProcess().Kill(); err != nil {
		t.Fatalf("stop flanneld: %v", err)
	}
	if err := os.Remove(c.FlannelSubnetFile()); err != nil {
		t.Fatalf("remove the subnet file: %v", err)
	}
	c.KillEdge()
	c.StartEdge()
	logged := len(flanneldLog(t, c))
	c.StartFlanneld(kubeconfig)
	t.Run("reboot with the cloud stopped", func(t *testing.T) {
		waitFlannelUp(t, c, logged)
		time.Sleep(flannelSettle)
		select {
		case <-c.FlanneldProcess().Exited():
			t.Errorf("flanneld exited: %v\n%s", c.FlanneldProcess().ExitErr(), c.FlanneldProcess().Tail(30))
		default:
		}
	})
}

// flannelSettle is how long flanneld must keep running once up.
const flannelSettle = 5 * time.Second

// waitFlannelUp waits up to componentSyncTimeout for the subnet file and,
// in flanneld's log past byte from, the peer's add command.
func waitFlannelUp(t *testing.T, c *framework.Cluster, from int) {
	t.Helper()
	want := "flannel-peer-added " + peerSubnet + " 192.0.2.7"
	_, err := eventually(t.Context(), componentSyncTimeout, func() (string, error) {
		b, err := os.ReadFile(c.FlannelSubnetFile())
		if err != nil || !strings.Contains(string(b), flannelSubnet) {
			return "", fmt.Errorf("subnet file: %v %q, want %s", err, b, flannelSubnet)
		}
		if log := flanneldLog(t, c); !strings.Contains(log[min(from, len(log)):], want) {
			return "", fmt.Errorf("flanneld has not logged %q", want)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("within %s: %v\n%s", componentSyncTimeout, err, c.FlanneldProcess().Tail(40))
	}
}

// flanneldLog is flanneld's whole log.
func flanneldLog(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	b, err := os.ReadFile(c.FlanneldProcess().LogPath)
	if err != nil {
		t.Fatalf("read flanneld's log: %v", err)
	}
	return string(b)
}
