//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// The operator scenario's namespaces: the operator's own and a tenant's.
const (
	operatorNS = "op-app"
	tenantNS   = "op-tenant"
)

// widgetsGVR is the fixture custom resource; the node may not read its
// definition, and the operator's Role names only the resource.
var (
	widgetsGVR = schema.GroupVersionResource{Group: "e2e.apiserver-lite.io", Version: "v1", Resource: "widgets"}
	crdGVR     = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// crdEstablishTimeout bounds how long the cloud takes to serve a new CRD.
const crdEstablishTimeout = 30 * time.Second

// createWidgetsCRD creates the namespaced widgets CRD and waits until the
// cloud serves it.
func createWidgetsCRD(t *testing.T, c *framework.Cluster) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(c.AdminConfig)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": widgetsGVR.Resource + "." + widgetsGVR.Group},
		"spec": map[string]any{
			"group": widgetsGVR.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	_, err := eventually(t.Context(), crdEstablishTimeout, func() (string, error) {
		_, err := dyn.Resource(widgetsGVR).Namespace(operatorNS).List(t.Context(), metav1.ListOptions{})
		return "", err
	})
	if err != nil {
		t.Fatalf("CRD not served within %s: %v", crdEstablishTimeout, err)
	}
}

// createWidget creates widget name in ns.
func createWidget(t *testing.T, c *framework.Cluster, ns, name string) {
	t.Helper()
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgetsGVR.GroupVersion().String(), "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": name},
	}}
	if _, err := dynamic.NewForConfigOrDie(c.AdminConfig).Resource(widgetsGVR).Namespace(ns).Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create widget %s/%s: %v", ns, name, err)
	}
}

// createConfigMaps creates n configmaps prefix-0.. in ns.
func createConfigMaps(t *testing.T, c *framework.Cluster, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}, Data: map[string]string{"k": "v"}}
		if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap: %v", err)
		}
	}
}

// namespacedReaderToken creates, in ns, service account sa with a Role
// that may get, list and watch configmaps and widgets there, a pod using
// it bound to the node, and returns a token bound to that pod.
func namespacedReaderToken(t *testing.T, c *framework.Cluster, ns, sa string) string {
	t.Helper()
	ctx := t.Context()
	rbac := c.Admin.RbacV1()
	mustCreate(t, func() error {
		_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{widgetsGVR.Group}, Resources: []string{widgetsGVR.Resource}, Verbs: []string{"get", "list", "watch"}},
			}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
	return componentToken(t, c, ns, sa, sa+"-"+c.NodeName, appImage)
}

// createNode creates the edge's Node, which NodeRestriction needs for
// the node to mint its pods' tokens.
func createNode(t *testing.T, c *framework.Cluster) {
	t.Helper()
	mustCreate(t, func() error {
		_, err := c.Admin.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName}}, metav1.CreateOptions{})
		return err
	})
}
