//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// edgeSyncTimeout bounds how long an object the cloud already holds may take
// to show up through apiserver-lite once it is ready.
const edgeSyncTimeout = 30 * time.Second

// TestSmoke brings up the cloud, writes through the admin, then starts
// apiserver-lite and reads the same object through its local API.
func TestSmoke(t *testing.T) {
	const ns, name = "smoke", "smoke-cm"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	want := map[string]string{"greeting": "hello from the cloud"}

	t.Run("cloud", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: want}
		if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap: %v", err)
		}
		out, err := c.KubectlCloud("get", "cm", "-A")
		if err != nil {
			t.Fatalf("%v", err)
		}
		if !tableHasRow(out, ns, name) {
			t.Fatalf("kubectl get cm -A on the cloud: no row %s/%s in:\n%s", ns, name, out)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("edge", func(t *testing.T) {
		c.StartEdge()
		out, err := eventually(t.Context(), edgeSyncTimeout, func() (string, error) {
			out, err := c.KubectlEdge("get", "cm", "-A")
			if err == nil && !tableHasRow(out, ns, name) {
				err = fmt.Errorf("no row %s/%s in:\n%s", ns, name, out)
			}
			return out, err
		})
		if err != nil {
			t.Fatalf("kubectl --server %s get cm -A: %v", c.EdgeURL, err)
		}
		t.Logf("kubectl --server %s get cm -A:\n%s", c.EdgeURL, out)
		got, err := c.EdgeClient().CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get configmap through the edge: %v", err)
		}
		if fmt.Sprint(got.Data) != fmt.Sprint(want) {
			t.Errorf("configmap data through the edge: got %v, want %v", got.Data, want)
		}
	})
}

// tableHasRow reports whether kubectl's table output has a row starting
// with the given columns.
func tableHasRow(out string, columns ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= len(columns) && strings.Join(fields[:len(columns)], " ") == strings.Join(columns, " ") {
			return true
		}
	}
	return false
}

// eventually retries f every second until it succeeds or timeout passes,
// and returns the last result.
func eventually(ctx context.Context, timeout time.Duration, f func() (string, error)) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		out, err := f()
		if err == nil {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(time.Second):
		}
	}
}
