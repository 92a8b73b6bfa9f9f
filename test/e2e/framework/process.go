//go:build e2e

package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 5 * time.Second

// killWait bounds the wait for a process group to exit after SIGKILL.
const killWait = 10 * time.Second

// Process is one external command run in its own process group, with its
// stdout and stderr appended to a log file that outlives restarts.
type Process struct {
	// Name, Path, Args, Env and LogPath are set once before the first Start.
	Name    string
	Path    string
	Args    []string
	Env     []string // appended to os.Environ
	LogPath string
	// Held, when set, are sockets passed to every start as systemd's
	// socket activation passes them (see HeldSockets).
	Held *HeldSockets

	mu sync.Mutex
	// cmd is the running command; nil before Start and after it is reaped.
	// Guarded by mu.
	cmd *exec.Cmd
	// done is closed when cmd has exited; nil when cmd is nil. Guarded by mu.
	done chan struct{}
	// exitErr is the result of cmd.Wait, valid once done is closed.
	exitErr error
}

// Start runs the command. It fails if the process is already running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() {
		return fmt.Errorf("start %s: already running as pid %d", p.Name, p.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s log: %w", p.Name, err)
	}
	fmt.Fprintf(logFile, "=== %s start %s: %s %q\n", time.Now().Format(time.RFC3339Nano), p.Name, p.Path, p.Args)
	cmd := p.Held.command(p.Path, p.Args)
	cmd.Env = append(append(os.Environ(), p.Env...), cmd.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A process group lets teardown kill children too. Pdeathsig kills the
	// process if the test binary dies before its cleanups run, for example
	// when go test -timeout panics.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		err := cmd.Wait()
		logFile.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// runningLocked reports whether the current run has not exited yet.
// p.mu must be held.
func (p *Process) runningLocked() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pid returns the PID of the running process, or 0.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited returns a channel closed when the current run has exited, or nil if
// the process was never started.
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// ExitErr describes how the current run ended; call it after Exited fires.
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// Kill sends SIGKILL to the whole process group and waits until it is reaped.
func (p *Process) Kill() error {
	return p.stop(0)
}

// Stop sends SIGTERM to the process group, then SIGKILL after stopGrace.
func (p *Process) Stop() error {
	return p.stop(stopGrace)
}

// stop signals the process group and reaps the process. A grace of zero
// skips SIGTERM. Stopping a process that is not running is a no-op.
func (p *Process) stop(grace time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pgid := cmd.Process.Pid
	if grace > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(grace):
		}
	}
	// Kill the group even after the leader exited: children may remain.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s group %d: %w", p.Name, pgid, err)
	}
	select {
	case <-done:
	case <-time.After(killWait):
		return fmt.Errorf("kill %s pid %d: still running after %s", p.Name, pgid, killWait)
	}
	p.mu.Lock()
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	return nil
}

// Tail returns at most the last n lines of the process log.
func (p *Process) Tail(n int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("read %s log: %v", p.Name, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
