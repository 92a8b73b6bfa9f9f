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
	"sync"
	"syscall"
	"time"
)

// BackgroundKubectl is a kubectl run that keeps going, such as get -w,
// whose output is read while it runs.
type BackgroundKubectl struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu sync.Mutex
	// out collects stdout and stderr as they arrive. Guarded by mu.
	out bytes.Buffer
}

// Write appends kubectl's output; it makes BackgroundKubectl an io.Writer
// for the command's stdout and stderr.
func (b *BackgroundKubectl) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.Write(p)
}

// Output returns everything kubectl printed so far.
func (b *BackgroundKubectl) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

// Stop kills kubectl if it still runs and waits until it has exited.
func (b *BackgroundKubectl) Stop() {
	select {
	case <-b.done:
		return
	default:
	}
	_ = b.cmd.Process.Kill()
	<-b.done
}

// Exited is closed once kubectl has exited.
func (b *BackgroundKubectl) Exited() <-chan struct{} { return b.done }

// Wait waits until kubectl has exited and returns all it printed.
func (b *BackgroundKubectl) Wait() string {
	<-b.done
	return b.Output()
}

// StartKubectlEdge starts kubectl against apiserver-lite's local API like
// KubectlEdge, but returns at once. kubectl is killed when ctx ends or the
// test ends, whichever comes first. Its stdout and stderr are collected.
func (c *Cluster) StartKubectlEdge(ctx context.Context, args ...string) (*BackgroundKubectl, error) {
	full := append([]string{"--server", c.EdgeURL}, args...)
	return c.startKubectl(ctx, c.EdgeLocalKubeconfig, true, full...)
}

// StartKubectl starts kubectl with kubeconfig and kills it after d; only
// its stdout is collected, for comparing printed tables.
func (c *Cluster) StartKubectl(d time.Duration, kubeconfig string, args ...string) *BackgroundKubectl {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), d)
	b, err := c.startKubectl(ctx, kubeconfig, false, args...)
	if err != nil {
		cancel()
		c.t.Fatalf("%v", err)
	}
	go func() {
		<-b.done
		cancel()
	}()
	return b
}

// startKubectl starts kubectl with its own home and cache dir.
func (c *Cluster) startKubectl(ctx context.Context, kubeconfig string, withStderr bool, args ...string) (*BackgroundKubectl, error) {
	home := filepath.Join(c.Dir, "kubectl-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("kubectl home: %w", err)
	}
	full := append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache")}, args...)
	b := &BackgroundKubectl{done: make(chan struct{})}
	b.cmd = exec.CommandContext(ctx, c.Bins.Kubectl, full...)
	b.cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=")
	b.cmd.Stdout = b
	if withStderr {
		b.cmd.Stderr = b
	}
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kubectl %s: %w", strings.Join(args, " "), err)
	}
	go func() {
		_ = b.cmd.Wait()
		close(b.done)
	}()
	c.t.Cleanup(b.Stop)
	return b, nil
}

// ClearKubectlCache removes kubectl's discovery and HTTP caches, so the
// next run discovers the API afresh.
func (c *Cluster) ClearKubectlCache() {
	c.t.Helper()
	if err := os.RemoveAll(filepath.Join(c.Dir, "kubectl-home", "cache")); err != nil {
		c.t.Fatalf("clear kubectl cache: %v", err)
	}
}
