//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// TestTenantTokenRequestNotStored: a tenant's TokenRequest through the TLS
// door is answered 201 and leaves no row; the node's own request for the
// same pod, through the loopback door, is stored.
func TestTenantTokenRequestNotStored(t *testing.T) {
	const ns = "tenant-token"
	secure := freeLoopbackAddress(t)
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns},
		EdgeArgs: []string{"--secure-listen-address", secure}})
	ctx := t.Context()
	pod := createTenant(t, c, ns)
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "mint-tokens"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"},
				ResourceNames: []string{"reader"}, Verbs: []string{"create"}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := c.Admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mint-tokens"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "mint-tokens"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
	bound := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", bound, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	t.Setenv("APISERVER_LITE_CLIENT_CA_FILE", filepath.Join(c.Dir, "pki", "ca.crt"))
	c.StartEdge()
	tenant := tlsDoorClient(t, secure, filepath.Join(c.EdgeDataDir(), "tls", "ca.crt"), tr.Status.Token)
	var minted *authenticationv1.TokenRequest
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tenantReadTimeout, true, func(ctx context.Context) (bool, error) {
		minted, err = tenant.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", bound, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil || minted.Status.Token == "" {
		t.Fatalf("tenant's token request through the TLS door: %v, want 201", err)
	}
	if n := storedTokenRows(t, c); n != 0 {
		t.Errorf("after the tenant's request: got %d stored token rows, want 0", n)
	}
	// The node's own request for the pod it holds is kept: the count
	// above could have seen a row.
	edge := c.EdgeClient()
	if _, err := edge.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("edge does not hold the pod: %v", err)
	}
	if _, err := edge.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", bound, metav1.CreateOptions{}); err != nil {
		t.Fatalf("node's token request: %v", err)
	}
	if n := storedTokenRows(t, c); n != 1 {
		t.Errorf("after the node's request: got %d stored token rows, want 1", n)
	}
}

// storedTokenRows counts the stored TokenRequest answers in the running
// edge's database.
func storedTokenRows(t *testing.T, c *framework.Cluster) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+c.EdgeDBPath()+"?mode=ro")
	if err != nil {
		t.Fatalf("open edge db: %v", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM meta WHERE key LIKE 'tokenrequest/%'`).Scan(&n); err != nil {
		t.Fatalf("count token rows: %v", err)
	}
	return n
}
