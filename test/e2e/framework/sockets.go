//go:build e2e

package framework

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// listenPIDShell sets LISTEN_PID to the process's own pid and execs the
// command in its place, as systemd does after fork: the pid is known only
// once the child exists, and exec keeps it (and the passed descriptors).
const listenPIDShell = `LISTEN_PID=$$ exec "$0" "$@"`

// HeldSockets are listening sockets the harness holds for a daemon, as a
// systemd socket unit does: opened once, passed to every start of the
// process from fd 3 with LISTEN_FDS, LISTEN_FDNAMES and LISTEN_PID, and
// kept open across its restarts, so connections made while the daemon
// restarts wait in the backlog. Nothing here ever accepts on them.
type HeldSockets struct {
	// names and files are the held sockets in the order they are passed;
	// set by Hold before the first start, then read-only.
	names []string
	files []*os.File
}

// Hold listens on addr and holds the socket under name (the socket
// unit's FileDescriptorName=).
func (h *HeldSockets) Hold(name, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("hold socket %s at %s: %w", name, addr, err)
	}
	defer ln.Close() // the file holds the socket from here on
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return fmt.Errorf("hold socket %s at %s: %w", name, addr, err)
	}
	h.names, h.files = append(h.names, name), append(h.files, f)
	return nil
}

// Close releases the held sockets.
func (h *HeldSockets) Close() error {
	var errs []error
	for _, f := range h.files {
		errs = append(errs, f.Close())
	}
	h.files, h.names = nil, nil
	return errors.Join(errs...)
}

// command is path with args run with the held sockets passed as systemd
// passes them; without sockets, path itself.
func (h *HeldSockets) command(path string, args []string) *exec.Cmd {
	if h == nil || len(h.files) == 0 {
		return exec.Command(path, args...)
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", listenPIDShell, path}, args...)...)
	cmd.ExtraFiles = h.files // from fd 3, SD_LISTEN_FDS_START
	cmd.Env = []string{"LISTEN_FDS=" + strconv.Itoa(len(h.files)), "LISTEN_FDNAMES=" + strings.Join(h.names, ":")}
	return cmd
}

// Names of the held sockets as the daemon takes them: its doors' flags
// (pkg/door's SocketKubelet and SocketInsecure).
const (
	socketDoor     = "listen-address"
	socketInsecure = "insecure-listen-address"
)

// holdEdgeSockets holds the edge's two doors for every start of p, until
// the test ends.
func (c *Cluster) holdEdgeSockets(p *Process, door, insecure string) {
	c.t.Helper()
	h := &HeldSockets{}
	c.t.Cleanup(func() { _ = h.Close() })
	for _, s := range []struct{ name, addr string }{{socketDoor, door}, {socketInsecure, insecure}} {
		if err := h.Hold(s.name, s.addr); err != nil {
			c.t.Fatalf("%v", err)
		}
	}
	p.Held = h
}

// TermEdge sends apiserver-lite SIGTERM, as systemctl restart does, and
// returns when it has exited (SIGKILL after the stop grace) and when the
// signal was sent.
func (c *Cluster) TermEdge() time.Time {
	c.t.Helper()
	if c.edge == nil {
		c.t.Fatalf("stop edge: apiserver-lite was never started")
	}
	sent, err := c.edge.term()
	if err != nil {
		c.t.Fatalf("stop edge: %v", err)
	}
	return sent
}

// termGrace is how long term waits after SIGTERM before SIGKILL: the
// unit's TimeoutStopSec=, as systemctl restart waits.
const termGrace = 30 * time.Second

// term is Stop with the unit's grace; it also returns when SIGTERM was
// sent, and fails when the process needed SIGKILL.
func (p *Process) term() (time.Time, error) {
	sent := time.Now()
	err := p.stop(termGrace)
	if err == nil && p.ExitErr() != nil {
		var exit *exec.ExitError
		if errors.As(p.ExitErr(), &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
			err = fmt.Errorf("%s did not exit within %s of SIGTERM: %w", p.Name, termGrace, p.ExitErr())
		}
	}
	return sent, err
}

// HoldSockets makes the harness hold the node's two doors and pass them to
// each start of its apiserver-lite, as systemd's socket activation does.
// Call it before the first Start.
func (n *Node) HoldSockets() {
	n.c.t.Helper()
	n.c.holdEdgeSockets(n.proc, strings.TrimPrefix(n.DoorURL, "https://"), strings.TrimPrefix(n.URL, "http://"))
}

// Term sends the node's apiserver-lite SIGTERM, as systemctl restart does,
// and waits until it has exited.
func (n *Node) Term() error {
	_, err := n.proc.term()
	return err
}
