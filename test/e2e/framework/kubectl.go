//go:build e2e

package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// kubectlTimeout bounds one kubectl run.
const kubectlTimeout = time.Minute

// Kubectl runs the built kubectl with kubeconfig and returns its stdout.
// The error includes stderr. Discovery caches live under Dir, so runs never
// read a cache another cluster left on a reused port.
func (c *Cluster) Kubectl(kubeconfig string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(c.t.Context(), kubectlTimeout)
	defer cancel()
	home := filepath.Join(c.Dir, "kubectl-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("kubectl home: %w", err)
	}
	full := append([]string{
		"--kubeconfig", kubeconfig,
		"--cache-dir", filepath.Join(home, "cache"),
		"--request-timeout", kubectlTimeout.String(),
	}, args...)
	cmd := exec.CommandContext(ctx, c.Bins.Kubectl, full...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// KubectlCloud runs kubectl as the cluster admin against kube-apiserver.
func (c *Cluster) KubectlCloud(args ...string) (string, error) {
	return c.Kubectl(c.AdminKubeconfig, args...)
}

// KubectlDoor runs kubectl against apiserver-lite's authenticated door as
// the node (KubeletKubeconfig: its client certificate and the daemon's CA).
func (c *Cluster) KubectlDoor(args ...string) (string, error) {
	return c.Kubectl(c.KubeletKubeconfig, args...)
}

// KubectlEdge runs kubectl --server EdgeURL against apiserver-lite's local
// API, without credentials.
func (c *Cluster) KubectlEdge(args ...string) (string, error) {
	return c.Kubectl(c.EdgeLocalKubeconfig, append([]string{"--server", c.EdgeURL}, args...)...)
}
