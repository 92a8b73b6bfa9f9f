package door

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
)

// unassignedHost is TEST-NET-1, never assigned to an interface here.
const unassignedHost = "192.0.2.1"

// freeBindSocket is a listening socket at an address no interface holds,
// bound as systemd's FreeBind=yes binds it, passed as the pods' door's.
func freeBindSocket(t *testing.T) (*os.File, string) {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_IP, syscall.IP_FREEBIND, 1) })
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", net.JoinHostPort(unassignedHost, "0"))
	if err != nil {
		t.Fatalf("listen with IP_FREEBIND: %v", err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), SocketPods), ln.Addr().String()
}

// The pods' door at an address not assigned yet serves at once on the
// socket systemd bound for it (FreeBind=yes), instead of waiting for the
// address as it does on its own socket.
func TestPodsDoorServesPassedSocketAtOnce(t *testing.T) {
	f, addr := freeBindSocket(t)
	if err := CheckBound(addr); err == nil {
		t.Skipf("%s is assigned here", unassignedHost)
	}
	sockets, err := ClaimSockets(map[string]string{SocketPods: addr}, []*os.File{f})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	defer sockets.Close()
	var p podsDoor
	if _, err := p.open(SetConfig{SecureListenAddress: addr, Logger: slog.New(slog.DiscardHandler), Sockets: sockets},
		&tls.Config{MinVersion: tls.VersionTLS12}); err != nil {
		t.Fatalf("open: %v", err)
	}
	defer p.stop()
	if p.unbound() {
		t.Errorf("pods' door on a passed socket: got waiting for its address, want it served at once")
	}
	ln, err := sockets.Listen(SocketPods, addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	if got := ln.Addr().String(); got != addr {
		t.Errorf("pods' door listener: got %s, want the passed socket at %s", got, addr)
	}
}
