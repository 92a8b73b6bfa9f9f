//go:build e2e

package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rbacManifest is the cluster-scope RBAC for apiserver-lite's own user
// (configs/sync-scopes.md), relative to the root.
const rbacManifest = "test/e2e/framework/testdata/cluster-scope-rbac.yaml"

// rbacTimeout bounds the wait until the applied RBAC authorizes the edge;
// the RBAC authorizer reads from informers, so it lags writes slightly.
const rbacTimeout = 30 * time.Second

// allowNodeImpersonation lets apiserver-lite's own user impersonate this
// node (system:node:<name> in system:nodes) and nothing else, as
// configs/sync-scopes.md documents for cluster scope.
func (c *Cluster) allowNodeImpersonation() {
	c.t.Helper()
	ctx := c.t.Context()
	name := "apiserver-lite:impersonate-node:" + c.NodeName
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"},
			ResourceNames: []string{fmt.Sprintf(nodeUserFmt, c.NodeName)}},
		{APIGroups: []string{""}, Resources: []string{"groups"}, Verbs: []string{"impersonate"},
			ResourceNames: []string{nodeGroup}},
	}}
	if _, err := c.Admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		c.t.Fatalf("create %s: %v", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: fmt.Sprintf(edgeUserFmt, c.NodeName)}}}
	if _, err := c.Admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		c.t.Fatalf("create %s: %v", name, err)
	}
}

// rootCAConfigMap is the ConfigMap the root-ca-cert publisher controller
// would create in every namespace; pods mount it through kube-api-access.
const rootCAConfigMap = "kube-root-ca.crt"

// applyRBAC applies rbacManifest with kubectl as the admin and waits
// until the cloud authorizes apiserver-lite's identity to watch configmaps.
func (c *Cluster) applyRBAC() {
	c.t.Helper()
	root, err := RepoRoot()
	if err != nil {
		c.t.Fatalf("%v", err)
	}
	if out, err := c.KubectlCloud("apply", "-f", filepath.Join(root, rbacManifest)); err != nil {
		c.t.Fatalf("apply %s: %v\n%s", rbacManifest, err, out)
	}
	c.allowNodeImpersonation()
	user := fmt.Sprintf(edgeUserFmt, c.NodeName)
	reviews := []*authorizationv1.ResourceAttributes{{Verb: "watch", Resource: "configmaps"},
		{Verb: "impersonate", Resource: "users", Name: fmt.Sprintf(nodeUserFmt, c.NodeName)}}
	check := func(ctx context.Context) error {
		for _, ra := range reviews {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{edgeGroup, "system:authenticated"}, ResourceAttributes: ra}}
			got, err := c.Admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if !got.Status.Allowed {
				return fmt.Errorf("%s may not %s %s: %s", user, ra.Verb, ra.Resource, got.Status.Reason)
			}
		}
		return nil
	}
	if err := waitFor(c.t.Context(), c.apiserver, "edge RBAC", rbacTimeout, check); err != nil {
		c.t.Fatalf("%v", err)
	}
}

// CreateNamespace creates namespace name if missing, with the objects pods
// need that no controller-manager creates here: ServiceAccount default and
// ConfigMap kube-root-ca.crt.
func (c *Cluster) CreateNamespace(name string) {
	c.t.Helper()
	ctx := c.t.Context()
	core := c.Admin.CoreV1()
	objects := []func() error{
		func() error {
			_, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: rootCAConfigMap},
				Data:       map[string]string{"ca.crt": string(c.pki.CAPEM)},
			}
			_, err := core.ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objects {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			c.t.Fatalf("prepare namespace %s: %v", name, err)
		}
	}
}
