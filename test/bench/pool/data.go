//go:build e2e

package pool

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// createPoolRBAC creates the pool's service account and the election's
// Role (configs/pool.yaml), and kube-proxy's account bound to
// system:node-proxier.
func createPoolRBAC(ctx context.Context, cs kubernetes.Interface) error {
	for _, sa := range []struct{ ns, name string }{{poolBenchNS, poolBenchNS}, {bench.HeldSystemNS, poolProxySA}} {
		if err := bench.IgnoreExists(cs.CoreV1().ServiceAccounts(sa.ns).Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.name}}, metav1.CreateOptions{})); err != nil {
			return fmt.Errorf("service account %s/%s: %w", sa.ns, sa.name, err)
		}
	}
	rbac := cs.RbacV1()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pool-election"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"pool-" + poolBenchName},
			Verbs: []string{"get", "update"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}}}}
	if _, err := rbac.Roles(poolBenchNS).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("election role: %w", err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pool-election"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pool-election"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: poolBenchNS, Namespace: poolBenchNS}}}
	if _, err := rbac.RoleBindings(poolBenchNS).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("election binding: %w", err)
	}
	proxy := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench:pool-kube-proxy"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-proxier"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: poolProxySA, Namespace: bench.HeldSystemNS}}}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, proxy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kube-proxy binding: %w", err)
	}
	return nil
}

// poolPods is what createPoolNode made for one member: its kube-proxy
// pod and a token bound to it for the API server's audience (what the
// reader on the node presents at its door), and its pool pod.
type poolPods struct {
	proxy, pool *corev1.Pod
	proxyToken  string
}

// createPoolNode creates member node name with ip as its InternalIP, the
// pool service account's pod on it, and a kube-proxy pod whose projected
// token volume names the pool audience (so the node may mint a
// pool-audience token for it).
func createPoolNode(ctx context.Context, cs kubernetes.Interface, name, ip string) (poolPods, error) {
	var p poolPods
	core := cs.CoreV1()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	if _, err := core.Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return p, fmt.Errorf("node %s: %w", name, err)
	}
	var err error
	p.pool, err = core.Pods(poolBenchNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pool-" + name},
		Spec: corev1.PodSpec{NodeName: name, ServiceAccountName: poolBenchNS,
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}}}, metav1.CreateOptions{})
	if err != nil {
		return p, fmt.Errorf("pool pod of %s: %w", name, err)
	}
	vol := corev1.Volume{Name: "pool-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: poolBenchAudience, ExpirationSeconds: ptr.To[int64](3600), Path: "token"}}}}}}
	p.proxy, err = core.Pods(bench.HeldSystemNS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-" + name},
		Spec: corev1.PodSpec{NodeName: name, ServiceAccountName: poolProxySA, Volumes: []corev1.Volume{vol},
			Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.3"}}}}, metav1.CreateOptions{})
	if err != nil {
		return p, fmt.Errorf("kube-proxy pod of %s: %w", name, err)
	}
	p.proxyToken, err = boundToken(ctx, cs, bench.HeldSystemNS, poolProxySA, p.proxy, nil)
	return p, err
}

// boundToken is a token for ns/sa bound to pod, for audiences (nil: the
// API server's).
func boundToken(ctx context.Context, cs kubernetes.Interface, ns, sa string, pod *corev1.Pod, audiences []string) (string, error) {
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", ns, pod.Name, err)
	}
	return tr.Status.Token, nil
}
