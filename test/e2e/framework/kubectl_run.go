//go:build e2e

package framework

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// KubectlRun is a kubectl process that runs for a fixed time, such as
// get -w, whose output can be read while it runs.
type KubectlRun struct {
	done chan struct{}
	mu   sync.Mutex
	out  bytes.Buffer // guarded by mu
}

// Write collects kubectl's stdout.
func (r *KubectlRun) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.Write(p)
}

// Output returns what kubectl printed so far.
func (r *KubectlRun) Output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// Wait waits until kubectl was stopped and returns all it printed.
func (r *KubectlRun) Wait() string {
	<-r.done
	return r.Output()
}

// StartKubectl starts kubectl with kubeconfig and stops it after d.
func (c *Cluster) StartKubectl(d time.Duration, kubeconfig string, args ...string) *KubectlRun {
	c.t.Helper()
	home := filepath.Join(c.Dir, "kubectl-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		c.t.Fatalf("kubectl home: %v", err)
	}
	ctx, cancel := context.WithTimeout(c.t.Context(), d)
	full := append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache")}, args...)
	cmd := exec.CommandContext(ctx, c.Bins.Kubectl, full...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=")
	r := &KubectlRun{done: make(chan struct{})}
	cmd.Stdout = r
	if err := cmd.Start(); err != nil {
		cancel()
		c.t.Fatalf("start kubectl: %v", err)
	}
	go func() {
		defer close(r.done)
		defer cancel()
		_ = cmd.Wait() // ended by the deadline
	}()
	return r
}

// ClearKubectlCache removes kubectl's discovery and HTTP caches, so the
// next run discovers the API afresh.
func (c *Cluster) ClearKubectlCache() {
	c.t.Helper()
	if err := os.RemoveAll(filepath.Join(c.Dir, "kubectl-home", "cache")); err != nil {
		c.t.Fatalf("clear kubectl cache: %v", err)
	}
}
