//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// tenantReadTimeout bounds how long a referenced configmap may take to be
// readable through the TLS door after apiserver-lite is ready.
const tenantReadTimeout = time.Minute

// TestLocalAccess runs apiserver-lite on node credentials with its TLS door
// open, against a cloud enforcing Node,RBAC: a pod's service-account token
// reads what its Role allows and nothing the node merely holds, online and
// with the cloud stopped; missing or forged credentials, and the token of a
// deleted pod, get 401; the loopback door refuses a foreign Host header.
func TestLocalAccess(t *testing.T) {
	const ns = "tenant"
	secure := freeLoopbackAddress(t)
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns},
		EdgeArgs: []string{"--secure-listen-address", secure}})
	ctx := t.Context()
	pod := createTenant(t, c, ns)
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	// The TLS door trusts the cloud's client CA, which issued the node's
	// certificate (the environment reaches the daemon's process).
	t.Setenv("APISERVER_LITE_CLIENT_CA_FILE", filepath.Join(c.Dir, "pki", "ca.crt"))
	c.StartEdge()
	caFile := filepath.Join(c.Dir, "edge-data", "tls", "ca.crt")
	tenant := tlsDoorClient(t, secure, caFile, tr.Status.Token)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tenantReadTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := tenant.CoreV1().ConfigMaps(ns).Get(ctx, "tenant-cm", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		_, gerr := tenant.CoreV1().ConfigMaps(ns).Get(ctx, "tenant-cm", metav1.GetOptions{})
		t.Fatalf("tenant reads its configmap online: %v", gerr)
	}
	checkTenantDenied(t, tenant, ns, "online")
	checkTenantWrites(t, c, tenant, ns)
	checkUnauthenticated(t, secure, caFile, tr.Status.Token)
	checkLoopbackHost(t, c.EdgeURL, ns)
	checkNodeCertificate(t, c, secure, caFile, ns)

	c.StopCloud()
	if _, err := tenant.CoreV1().ConfigMaps(ns).Get(ctx, "tenant-cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("tenant reads its configmap with the cloud stopped: got %v, want 200", err)
	}
	checkTenantDenied(t, tenant, ns, "cloud stopped")
	c.StartCloud()

	now := int64(0) // no kubelet confirms a graceful deletion here
	if err := c.Admin.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tenantReadTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := tenant.CoreV1().ConfigMaps(ns).Get(ctx, "tenant-cm", metav1.GetOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		t.Fatalf("token of a deleted pod: still accepted after %s, want 401", tenantReadTimeout)
	}
}

// createTenant creates the node, a configmap and a secret, a service
// account "reader" that may get and list configmaps, and a pod on the node
// that runs as reader and references both objects.
func createTenant(t *testing.T, c *framework.Cluster, ns string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	core, rbac := c.Admin.CoreV1(), c.Admin.RbacV1()
	mustCreate(t, func() error {
		_, err := core.Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenant-cm"},
			Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := core.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tenant-secret"},
			Data: map[string][]byte{"k": []byte("v")}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}},
			metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				Verbs: []string{"get", "list", "watch", "create"}}}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-configmaps"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
	pod, err := core.Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Spec: corev1.PodSpec{NodeName: c.NodeName, ServiceAccountName: "reader",
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "tenant-cm"}}}}}},
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: "tenant-secret"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return pod
}

func tlsDoorClient(t *testing.T, addr, caFile, token string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + addr, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}})
	if err != nil {
		t.Fatalf("tls door client: %v", err)
	}
	return cs
}

// checkTenantDenied: the node holds the pod's secret and pods, but the
// tenant may read neither.
func checkTenantDenied(t *testing.T, tenant kubernetes.Interface, ns, when string) {
	t.Helper()
	ctx := t.Context()
	if _, err := tenant.CoreV1().Secrets(ns).Get(ctx, "tenant-secret", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("%s: tenant reads the secret held for its pod: got %v, want 403", when, err)
	}
	if _, err := tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("%s: tenant lists pods: got %v, want 403", when, err)
	}
}

// checkTenantWrites: a write goes to the cloud with the caller's own token.
// The tenant may create configmaps and the node may not, so only a write
// forwarded as the tenant succeeds.
func checkTenantWrites(t *testing.T, c *framework.Cluster, tenant kubernetes.Interface, ns string) {
	t.Helper()
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made-by-tenant"}, Data: map[string]string{"k": "v"}}
	if _, err := tenant.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant creates a configmap through the TLS door: got %v, want 201", err)
	}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the tenant's configmap in the cloud: got %v, want it created", err)
	}
}

func checkUnauthenticated(t *testing.T, addr, caFile, token string) {
	t.Helper()
	forged := token[:len(token)-4] + "AAAA"
	for name, tok := range map[string]string{"no credentials": "", "forged token": forged} {
		cs := tlsDoorClient(t, addr, caFile, tok)
		_, err := cs.CoreV1().ConfigMaps("tenant").Get(t.Context(), "tenant-cm", metav1.GetOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: got %v, want 401", name, err)
		}
	}
}

func checkLoopbackHost(t *testing.T, edgeURL, ns string) {
	t.Helper()
	for host, want := range map[string]int{"evil.example": http.StatusForbidden, edgeURL[len("http://"):]: http.StatusOK} {
		req, err := http.NewRequestWithContext(t.Context(), "GET", edgeURL+"/api/v1/namespaces/"+ns+"/configmaps/tenant-cm", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("loopback door: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("loopback door with Host %q: got %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func freeLoopbackAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprintf("127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port)
}

// checkNodeCertificate: the node's own client certificate gets the node's
// view through the TLS door (the secret held for its pod), and /metrics is
// answered by the daemon itself, never by the cloud, which would answer a
// node 403.
func checkNodeCertificate(t *testing.T, c *framework.Cluster, addr, caFile, ns string) {
	t.Helper()
	node, err := clientcmd.BuildConfigFromFlags("", c.EdgeCloudKubeconfig)
	if err != nil {
		t.Fatalf("node kubeconfig: %v", err)
	}
	cfg := &rest.Config{Host: "https://" + addr, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile,
		CertFile: node.CertFile, KeyFile: node.KeyFile, CertData: node.CertData, KeyData: node.KeyData}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(t.Context(), "tenant-secret", metav1.GetOptions{}); err != nil {
		t.Errorf("node certificate reads the secret held for its pod: got %v, want 200", err)
	}
	var code int
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Do(t.Context()).StatusCode(&code).Raw()
	if code != http.StatusOK || !strings.Contains(string(body), "apiserver_lite_cloud_link_up") {
		t.Errorf("node certificate GET /metrics: got %d (err %v), want 200 with the daemon's own metrics", code, err)
	}
}
