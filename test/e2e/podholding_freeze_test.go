//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// freezeDeadline is how soon kube-proxy must see a new EndpointSlice
// while the cloud is up, however a tenant read first (issue: 10 s).
const freezeDeadline = 10 * time.Second

// sliceReaderRole may list and watch EndpointSlices cluster-wide: the
// attacker's service account.
var sliceReaderRole = rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "e2e:slice-reader"},
	Rules: []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"},
		Verbs: []string{"list", "watch"}}},
}

// TestTenantCannotFreezeHeldResources: kube-proxy makes the edge hold
// EndpointSlices; then a tenant whose service account may list them
// cluster-wide, in a pod without an API-audience token volume (whose
// token NodeRestriction never mints for the node) and with a lower UID
// than kube-proxy's pod (the owner a token used to be minted for), lists
// them through the pods' door, and so does a pod of an allowed namespace
// (kube-system) in the same state. The edge and kube-proxy restart with
// the cloud up, and the tenant lists before kube-proxy does. The tenant
// never owns the holding; the kube-system pod does until the cloud
// refuses its token, and the holding fails over to kube-proxy. Before and
// after the restart kube-proxy sees a new EndpointSlice within 10 s, and
// /readyz?verbose names kube-proxy, and neither reader, as the sync
// identity.
func TestTenantCannotFreezeHeldResources(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{systemNS, heldNS}})
	f := createHeldFixture(t, c)
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().ClusterRoles().Create(t.Context(), &sliceReaderRole, metav1.CreateOptions{})
		return err
	})
	proxyPod := upperHalfUIDProxy(t, c, &f)
	readers := []struct{ name, token string }{
		{"tenant", noVolumeReader(t, c, heldNS, "slice-reader", string(proxyPod.UID))},
		{"kube-system agent", noVolumeReader(t, c, systemNS, "stale-agent", string(proxyPod.UID))},
	}
	c.StartEdge()
	proxyKubeconfig := c.WriteDoorKubeconfig("kube-proxy", f.proxyToken)
	c.StartHollowProxy(proxyKubeconfig)
	waitProxySynced(t, c, f)
	for _, r := range readers {
		listSlicesAs(t, c, f, r.name, r.token)
	}
	checkNotFrozen(t, c, f, "web-before-restart")

	if err := c.HollowProxyProcess().Kill(); err != nil {
		t.Fatalf("stop kube-proxy: %v", err)
	}
	c.KillEdge()
	c.StartEdge()
	for _, r := range readers {
		listSlicesAs(t, c, f, r.name, r.token)
	}
	c.StartHollowProxy(proxyKubeconfig)
	waitProxySynced(t, c, f)
	checkNotFrozen(t, c, f, "web-after-restart")
	t.Run("the refused owner was dropped", func(t *testing.T) {
		log := c.EdgeProcess().Tail(400)
		if !strings.Contains(log, "the cloud refused to mint its token") || !strings.Contains(log, systemNS+"/stale-agent") {
			t.Errorf("the edge's log does not say the kube-system agent's token was refused:\n%s", tail(log, 40))
		}
	})
}

// listSlicesAs lists EndpointSlices cluster-wide through the pods' door
// on token and wants the fixture's among them.
func listSlicesAs(t *testing.T, c *framework.Cluster, f heldFixture, who, token string) {
	t.Helper()
	code, body := doorDo(t, doorClient(c), http.MethodGet, c.DoorURL+"/apis/discovery.k8s.io/v1/endpointslices", token, nil)
	if code != http.StatusOK || !strings.Contains(body, f.slice) {
		t.Fatalf("%s's list of EndpointSlices: got %d %.300s, want 200 with %s", who, code, body, f.slice)
	}
}

// checkNotFrozen creates EndpointSlice name and wants kube-proxy to see it
// within freezeDeadline, and /readyz?verbose to name kube-proxy, and no
// reader, as the EndpointSlices' sync identity.
func checkNotFrozen(t *testing.T, c *framework.Cluster, f heldFixture, name string) {
	t.Helper()
	t.Run("kube-proxy sees "+name, func(t *testing.T) {
		createSlice(t, c, f, name)
		want := fmt.Sprintf(`"Calling handler.OnEndpointSliceAdd" endpoints="%s/%s"`, heldNS, name)
		if _, err := eventually(t.Context(), freezeDeadline, func() (string, error) {
			if !strings.Contains(c.HollowProxyLog(), want) {
				return "", fmt.Errorf("kube-proxy has not logged %s", want)
			}
			return "", nil
		}); err != nil {
			t.Errorf("within %s: %v\n%s", freezeDeadline, err, tail(c.HollowProxyLog(), 20))
		}
	})
	t.Run("kube-proxy is the sync identity", func(t *testing.T) {
		line := readyzLine(readyzVerbose(t, c), readyEndpointSlices)
		if !strings.Contains(line, "synced as "+proxyHolder+" (pod ") || strings.Contains(line, "slice-reader") {
			t.Errorf("/readyz?verbose: got %q, want EndpointSlices synced as %s, the tenant not named", line, proxyHolder)
		}
	})
}

// noVolumeReader creates service account sa in ns, bound to
// sliceReaderRole, and a pod of it on the node that mounts no service
// account token, with a UID below below (created again until it is, as an
// attacker would), and returns a token bound to that pod (minted by the
// admin, as no projected volume of the pod would be).
func noVolumeReader(t *testing.T, c *framework.Cluster, ns, sa, below string) string {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}},
			metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + ns + ":" + sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: sliceReaderRole.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
	for range lowUIDAttempts {
		pod, err := c.Admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: sa + "-"},
			Spec: corev1.PodSpec{NodeName: c.NodeName, ServiceAccountName: sa, AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: sa, Image: appImage}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create a pod of %s/%s: %v", ns, sa, err)
		}
		if string(pod.UID) < below {
			return podToken(t, c, ns, sa, pod)
		}
		zero := int64(0)
		if err := c.Admin.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete pod %s/%s: %v", ns, pod.Name, err)
		}
	}
	t.Fatalf("no pod of %s/%s got a UID below %s in %d attempts", ns, sa, below, lowUIDAttempts)
	return ""
}

// lowUIDAttempts bounds the pods created for one with a UID in a half of
// the UID space: each has even odds, so all fail one time in 2^40.
const lowUIDAttempts = 40

// upperHalfUID is the least UID of the upper half of the UID space: a pod
// whose UID is at least this leaves even odds to each pod created for a
// lower one.
const upperHalfUID = "8"

// upperHalfUIDProxy creates the fixture's kube-proxy pod again until its
// UID is in the upper half, minting f.proxyToken for the pod it keeps, and
// returns that pod: without it, a low UID would leave a reader pod too
// little chance of a lower one.
func upperHalfUIDProxy(t *testing.T, c *framework.Cluster, f *heldFixture) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	pods := c.Admin.CoreV1().Pods(systemNS)
	pod, err := pods.Get(ctx, f.proxyPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range lowUIDAttempts {
		if string(pod.UID) >= upperHalfUID {
			f.proxyToken = podToken(t, c, systemNS, pod.Spec.ServiceAccountName, pod)
			return pod
		}
		zero := int64(0)
		if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete pod %s/%s: %v", systemNS, pod.Name, err)
		}
		again := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name}, Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName,
			ServiceAccountName: pod.Spec.ServiceAccountName,
			Containers:         []corev1.Container{{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image}}}}
		if pod, err = pods.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s/%s again: %v", systemNS, again.Name, err)
		}
	}
	t.Fatalf("the kube-proxy pod got no UID from %s in %d attempts", upperHalfUID, lowUIDAttempts)
	return nil
}

// createSlice creates an EndpointSlice name of the fixture service.
func createSlice(t *testing.T, c *framework.Cluster, f heldFixture, name string) {
	t.Helper()
	_, err := c.Admin.DiscoveryV1().EndpointSlices(heldNS).Create(t.Context(), &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: f.service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.8"},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create EndpointSlice %s: %v", name, err)
	}
}
