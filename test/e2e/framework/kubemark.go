//go:build e2e

package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeReadyTimeout bounds how long a hollow kubelet takes to register its
// node and report Ready; about 30 s on two cores.
const NodeReadyTimeout = 2 * time.Minute

// kubemarkRootDir matches the log line in which a hollow kubelet names the
// root dir it created under /tmp (it has no flag to choose one).
var kubemarkRootDir = regexp.MustCompile(`Using (/tmp/hollow-kubelet\.[A-Za-z0-9]+) as root dir`)

// StartKubemark starts a hollow kubelet for NodeName whose kubeconfig points
// at apiserver-lite's authenticated door with the node's own client
// certificate, so its reads are served by the edge and its writes are
// proxied to the cloud. It does not wait; see WaitNodeReady.
func (c *Cluster) StartKubemark() {
	c.t.Helper()
	if c.kubemark == nil {
		c.kubemark = c.newProcess("kubemark", c.Bins.Kubemark,
			"--morph", "kubelet",
			"--name", c.NodeName,
			"--kubeconfig", c.KubeletKubeconfig,
			"--kubelet-port", strconv.Itoa(c.mustFreePort()),
			"--kubelet-read-only-port", "0",
			"--use-host-image-service=false",
			"--v=2",
		)
	}
	c.startProcess(c.kubemark)
}

// RestartKubemark kills the hollow kubelet and starts it again with the
// same flags, as in a node reboot.
func (c *Cluster) RestartKubemark() {
	c.t.Helper()
	if c.kubemark == nil {
		c.t.Fatalf("restart kubemark: it was never started")
	}
	if err := c.kubemark.Kill(); err != nil {
		c.t.Fatalf("restart kubemark: %v", err)
	}
	c.startProcess(c.kubemark)
}

// KubemarkProcess returns the hollow kubelet, or nil before StartKubemark.
func (c *Cluster) KubemarkProcess() *Process {
	return c.kubemark
}

// WaitNodeReady waits until the cloud reports NodeName Ready, as seen by
// the admin client.
func (c *Cluster) WaitNodeReady() {
	c.t.Helper()
	proc := c.kubemark
	if proc == nil {
		c.t.Fatalf("wait node ready: kubemark was never started")
	}
	check := func(ctx context.Context) error {
		node, err := c.Admin.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s is not Ready yet", c.NodeName)
	}
	if err := waitFor(c.t.Context(), proc, "node Ready", NodeReadyTimeout, check); err != nil {
		c.t.Fatalf("%v\n%s", err, proc.Tail(logTailLines))
	}
}

// removeKubemarkRootDirs removes the /tmp root dirs that the runs logged in
// logPath created.
func removeKubemarkRootDirs(t testing.TB, logPath string) {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return
	}
	for _, m := range kubemarkRootDir.FindAllSubmatch(data, -1) {
		dir := filepath.Clean(string(m[1]))
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("remove kubemark root dir: %v", err)
		}
	}
}
