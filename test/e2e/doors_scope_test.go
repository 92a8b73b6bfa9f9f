//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// refuseStartTimeout bounds how long apiserver-lite may take to refuse a
// sync scope it must not pick.
const refuseStartTimeout = 30 * time.Second

// TestClusterScopeAuthorizesTheNode runs apiserver-lite in cluster scope
// (its own user, allowed to list secrets cluster-wide) with the kubelet on
// the node's certificate: the node reads through the edge exactly what the
// Node authorizer lets it read, not what the daemon holds. And auto refuses
// to pick cluster scope for credentials that are not a node's.
func TestClusterScopeAuthorizesTheNode(t *testing.T) {
	const ns = "elsewhere"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	ctx := t.Context()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "lonely"}, Data: map[string][]byte{"k": []byte("v")}}
	if _, err := c.Admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	c.StartEdge()
	edge := c.EdgeClient() // the insecure door: the daemon's cluster-scope view
	if _, err := eventually(ctx, time.Minute, func() (string, error) {
		_, err := edge.CoreV1().Secrets(ns).Get(ctx, "lonely", metav1.GetOptions{})
		return "", err
	}); err != nil {
		t.Fatalf("the daemon holds the secret in cluster scope: %v", err)
	}
	kubelet, err := kubernetes.NewForConfig(c.KubeletConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubelet.CoreV1().Secrets(ns).Get(ctx, "lonely", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("node certificate reads a secret no pod on the node uses: got %v, want 403 as from the cloud", err)
	}
	if _, err := kubelet.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("node certificate reads its own Node: got %v, want allowed", err)
	}
	checkAutoRefusesNonNode(t, c)
}

// checkAutoRefusesNonNode starts a second daemon on the edge's own
// (non-node) credentials with --sync-scope=auto and wants it to exit with
// a message naming --sync-scope=cluster.
func checkAutoRefusesNonNode(t *testing.T, c *framework.Cluster) {
	ctx, cancel := context.WithTimeout(t.Context(), refuseStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bins.APIServerLite, "--kubeconfig", c.EdgeCloudKubeconfig,
		"--data-dir", filepath.Join(t.TempDir(), "data"), "--listen-address", freeLoopbackAddress(t),
		"--node-name", c.NodeName, "--sync-scope", "auto")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("--sync-scope=auto on a non-node identity kept running for %s, want a refusal", refuseStartTimeout)
	}
	if err == nil || !strings.Contains(stderr.String(), "--sync-scope=cluster") {
		t.Errorf("--sync-scope=auto on a non-node identity: got %v, stderr %q; want an error naming --sync-scope=cluster", err, stderr.String())
	}
}
