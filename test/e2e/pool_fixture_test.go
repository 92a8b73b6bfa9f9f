//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// The pool scenario: its name, namespace, service account and audience
// (the daemon's defaults), the churned EndpointSlice's namespace and name.
const (
	poolName     = "site-a"
	poolNS       = "apiserver-lite-pool"
	poolAudience = "apiserver-lite-pool"
	poolSliceNS  = "pool-web"
	poolSlice    = "web-pool"
	// slicesKey is the EndpointSlices held for pods, as metrics name them.
	slicesKey = "discovery.k8s.io/v1/endpointslices?forPods=true"
)

// poolMember is one node of the pool: its daemon, pool door address, and
// kube-proxy pod and token.
type poolMember struct {
	node       *framework.Node
	poolAddr   string
	proxyPod   string
	proxyToken string
}

// createPoolRBAC creates the pool's namespace, service account and the
// election's Role (configs/pool.yaml), kube-proxy's account bound to
// system:node-proxier, and a tenant account with no RBAC.
func createPoolRBAC(t *testing.T, c *framework.Cluster) {
	t.Helper()
	ctx, core, rbac := t.Context(), c.Admin.CoreV1(), c.Admin.RbacV1()
	for _, sa := range []struct{ ns, name string }{{poolNS, poolNS}, {systemNS, "kube-proxy"}, {poolSliceNS, "tenant"}} {
		mustCreate(t, func() error {
			_, err := core.ServiceAccounts(sa.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.name}}, metav1.CreateOptions{})
			return err
		})
	}
	mustCreate(t, func() error {
		_, err := rbac.Roles(poolNS).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pool-election"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"pool-" + poolName},
					Verbs: []string{"get", "update"}},
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}}}},
			metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.RoleBindings(poolNS).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pool-election"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pool-election"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: poolNS, Namespace: poolNS}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e:kube-proxy"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-proxier"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "kube-proxy", Namespace: systemNS}}}, metav1.CreateOptions{})
		return err
	})
}

// addPoolMember creates node name (its Node with addr as InternalIP, the
// pool pod and a kube-proxy pod with a pool-audience token volume bound
// to it) and its daemon in the pool, not started.
func addPoolMember(t *testing.T, c *framework.Cluster, name, ip string) *poolMember {
	t.Helper()
	ctx, core := t.Context(), c.Admin.CoreV1()
	mustCreate(t, func() error {
		_, err := core.Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := core.Pods(poolNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pool-" + name},
			Spec: corev1.PodSpec{NodeName: name, ServiceAccountName: poolNS,
				Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}}}, metav1.CreateOptions{})
		return err
	})
	vol := corev1.Volume{Name: "pool-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: poolAudience, ExpirationSeconds: ptr.To[int64](3600), Path: "token"}}}}}}
	pod, err := core.Pods(systemNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-" + name},
		Spec: corev1.PodSpec{NodeName: name, ServiceAccountName: "kube-proxy", Volumes: []corev1.Volume{vol},
			Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.3"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create kube-proxy pod of %s: %v", name, err)
	}
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	m := &poolMember{node: c.AddNode(name), poolAddr: fmt.Sprintf("%s:%d", ip, port), proxyPod: pod.Name,
		proxyToken: podToken(t, c, systemNS, "kube-proxy", pod)}
	m.node.AddArgs("--pool", poolName, "--pool-listen-address", m.poolAddr)
	return m
}

// createPoolSlice creates the Service and EndpointSlice the churn
// updates, and returns the slice.
func createPoolSlice(t *testing.T, c *framework.Cluster) *discoveryv1.EndpointSlice {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().Services(poolSliceNS).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}, metav1.CreateOptions{})
		return err
	})
	s, err := c.Admin.DiscoveryV1().EndpointSlices(poolSliceNS).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: poolSlice, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create slice: %v", err)
	}
	return s
}

var leaderLine = regexp.MustCompile(`apiserver_lite_pool_leader\{leader="([^"]+)",pool="` + poolName + `",self="(true|false)"\} 1`)

// leaderOf is the leader node n's metrics name, and whether it is n.
func leaderOf(ctx context.Context, n *framework.Node) (string, bool) {
	m, err := n.Metrics(ctx)
	if err != nil {
		return "", false
	}
	g := leaderLine.FindStringSubmatch(m)
	if g == nil {
		return "", false
	}
	return g[1], g[2] == "true"
}

// waitMetric waits until node's metrics match want.
func waitMetric(t *testing.T, n *framework.Node, want *regexp.Regexp, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, err := n.Metrics(t.Context())
		if err == nil && want.MatchString(m) {
			return
		}
		if time.Now().After(deadline) {
			pool := regexp.MustCompile(`(?m)^apiserver_lite_pool.*$`).FindAllString(m, -1)
			t.Fatalf("%s: no %q in its metrics after %s (err %v); its pool metrics:\n%s", n.Name, want, timeout, err, strings.Join(pool, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// poolToken mints a token for sa's pod bound to it, for the pool audience.
func poolToken(t *testing.T, c *framework.Cluster, ns, sa string, pod *corev1.Pod) string {
	t.Helper()
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{poolAudience}, BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pool token request: %v", err)
	}
	return tr.Status.Token
}

// lease is the pool's Lease as the cloud has it.
func lease(t *testing.T, c *framework.Cluster) *coordinationv1.Lease {
	t.Helper()
	l, err := c.Admin.CoordinationV1().Leases(poolNS).Get(t.Context(), "pool-"+poolName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the pool's lease: %v", err)
	}
	return l
}
