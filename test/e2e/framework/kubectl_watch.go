//go:build e2e

package framework

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// KubectlFor runs kubectl with kubeconfig for d, then stops it, and
// returns what it printed: for commands that do not end, such as get -w.
func (c *Cluster) KubectlFor(d time.Duration, kubeconfig string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), d)
	defer cancel()
	home := filepath.Join(c.Dir, "kubectl-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		c.t.Fatalf("kubectl home: %v", err)
	}
	full := append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache")}, args...)
	cmd := exec.CommandContext(ctx, c.Bins.Kubectl, full...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	_ = cmd.Run() // ended by the deadline
	return stdout.String()
}

// ClearKubectlCache removes kubectl's discovery and HTTP caches, so the
// next run discovers the API afresh.
func (c *Cluster) ClearKubectlCache() {
	c.t.Helper()
	if err := os.RemoveAll(filepath.Join(c.Dir, "kubectl-home", "cache")); err != nil {
		c.t.Fatalf("clear kubectl cache: %v", err)
	}
}
