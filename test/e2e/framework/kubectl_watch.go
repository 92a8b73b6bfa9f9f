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

// StartKubectlEdge starts kubectl against apiserver-lite's local API like
// KubectlEdge, but returns at once. kubectl is killed when ctx ends or the
// test ends, whichever comes first.
func (c *Cluster) StartKubectlEdge(ctx context.Context, args ...string) (*BackgroundKubectl, error) {
	home := filepath.Join(c.Dir, "kubectl-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("kubectl home: %w", err)
	}
	full := append([]string{
		"--kubeconfig", c.EdgeLocalKubeconfig,
		"--cache-dir", filepath.Join(home, "cache"),
		"--server", c.EdgeURL,
	}, args...)
	b := &BackgroundKubectl{done: make(chan struct{})}
	b.cmd = exec.CommandContext(ctx, c.Bins.Kubectl, full...)
	b.cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=")
	b.cmd.Stdout, b.cmd.Stderr = b, b
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
