//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Namespaces of the pod-holding scenario: the system components' and the
// fixture service's (with the tenant).
const (
	systemNS = "kube-system"
	heldNS   = "held-web"
)

// Values found only in the fixture EndpointSlice and ServiceCIDR; long and
// unique, so that finding one in a file under the data dir means the
// object is stored there.
const (
	sliceMarker = "pod-held-endpointslice-marker-4b9e1f7a2c"
	cidrMarker  = "pod-held-servicecidr-marker-8d3a6c0e5f"
)

// markerAnnotation carries a marker on a fixture object.
const markerAnnotation = "e2e.apiserver-lite.io/marker"

// corednsClusterRole is the upstream system:coredns ClusterRole of the
// CoreDNS deployment manifests.
var corednsClusterRole = rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
	Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	},
}

// heldFixture is what createHeldFixture made: the components' and the
// tenant's pod-bound tokens, and the objects the components read.
type heldFixture struct {
	proxyToken, dnsToken, tenantToken string
	// proxyPod is the kube-proxy pod's name in systemNS.
	proxyPod string
	// service is the fixture Service in heldNS and clusterIP its address;
	// slice is its EndpointSlice.
	service, clusterIP, slice string
}

// createHeldFixture creates the node, the service accounts kube-system/
// kube-proxy (bound to system:node-proxier) and kube-system/coredns (bound
// to system:coredns) and heldNS/tenant (no RBAC), a pod for each bound to
// the node (no kubelet runs them), a token bound to each pod, and a
// Service with an EndpointSlice and a ServiceCIDR carrying markers.
func createHeldFixture(t *testing.T, c *framework.Cluster) heldFixture {
	t.Helper()
	createNode(t, c)
	return createHeldComponents(t, c)
}

// createHeldComponents is createHeldFixture on a node that exists.
func createHeldComponents(t *testing.T, c *framework.Cluster) heldFixture {
	t.Helper()
	ctx := t.Context()
	rbac := c.Admin.RbacV1()
	mustCreate(t, func() error {
		_, err := rbac.ClusterRoles().Create(ctx, &corednsClusterRole, metav1.CreateOptions{})
		return err
	})
	for sa, role := range map[string]string{"kube-proxy": "system:node-proxier", "coredns": corednsClusterRole.Name} {
		mustCreate(t, func() error {
			_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + sa},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: systemNS}}}, metav1.CreateOptions{})
			return err
		})
	}
	f := heldFixture{proxyPod: "kube-proxy-" + c.NodeName, service: "web", slice: "web-fixture"}
	f.proxyToken = componentToken(t, c, systemNS, "kube-proxy", f.proxyPod, "registry.k8s.io/kube-proxy:v1.36.3")
	f.dnsToken = componentToken(t, c, systemNS, "coredns", "coredns-"+c.NodeName, "registry.k8s.io/coredns/coredns:v1.15.0")
	f.tenantToken = componentToken(t, c, heldNS, "tenant", "tenant", appImage)
	f.clusterIP = createHeldService(t, c, f)
	return f
}

// componentToken creates service account sa in ns and a pod name using it
// bound to the node, and returns a token bound to that pod.
func componentToken(t *testing.T, c *framework.Cluster, ns, sa, name, image string) string {
	t.Helper()
	ctx := t.Context()
	core := c.Admin.CoreV1()
	mustCreate(t, func() error {
		_, err := core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		return err
	})
	pod, err := core.Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: c.NodeName, ServiceAccountName: sa,
			Containers: []corev1.Container{{Name: sa, Image: image}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	return podToken(t, c, ns, sa, pod)
}

// createHeldService creates the fixture Service, its EndpointSlice (no
// controller-manager runs to make one) and a ServiceCIDR, and returns the
// Service's ClusterIP.
func createHeldService(t *testing.T, c *framework.Cluster, f heldFixture) string {
	t.Helper()
	ctx := t.Context()
	svc, err := c.Admin.CoreV1().Services(heldNS).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: f.service},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service: %v", err)
	}
	mustCreate(t, func() error {
		_, err := c.Admin.DiscoveryV1().EndpointSlices(heldNS).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: f.slice, Labels: map[string]string{discoveryv1.LabelServiceName: f.service},
				Annotations: map[string]string{markerAnnotation: sliceMarker}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.7"},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: "held-fixture", Annotations: map[string]string{markerAnnotation: cidrMarker}},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.200.0.0/24"}},
		}, metav1.CreateOptions{})
		return err
	})
	return svc.Spec.ClusterIP
}
