//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// TestClusterScopeNodeWritesAsNode runs apiserver-lite in cluster scope,
// where its own identity may write every Node's status: the node's writes
// are forwarded impersonating the node, so NodeRestriction refuses the
// node's PATCH of another node's status and allows its own.
func TestClusterScopeNodeWritesAsNode(t *testing.T) {
	const other = "other-node"
	c := framework.New(t, framework.Options{NodeRestriction: true})
	for _, name := range []string{c.NodeName, other} {
		mustCreate(t, func() error {
			_, err := c.Admin.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		})
	}
	c.StartEdge()
	node := nodeHTTPClient(t, c)
	patch := `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"test",` +
		`"lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	for _, tc := range []struct {
		name, node string
		want       int
		wantMsg    string
	}{
		{name: "another node's status", node: other, want: http.StatusForbidden, wantMsg: "is not allowed to modify node"},
		{name: "its own status", node: c.NodeName, want: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "PATCH", c.DoorURL+"/api/v1/nodes/"+tc.node+"/status", strings.NewReader(patch))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
			resp, err := node.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(string(body), tc.wantMsg) {
				t.Fatalf("the node's PATCH of %s's status: got %d %.300s, want %d %q", tc.node, resp.StatusCode, body, tc.want, tc.wantMsg)
			}
		})
	}
}
