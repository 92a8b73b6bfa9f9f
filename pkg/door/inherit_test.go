package door

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// passedSocket is one socket a test passes as systemd would.
type passedSocket struct {
	name string
	// kind is "tcp" (a listener on addr), "unix" (a listener on a Unix
	// path) or "conn" (a connected TCP socket, not listening).
	kind, addr string
}

// pass opens each socket and returns it as systemd passes it: a file
// named by its FileDescriptorName=, and where it is bound.
func pass(t *testing.T, socks []passedSocket) ([]*os.File, []string) {
	t.Helper()
	var files []*os.File
	var bound []string
	for i, s := range socks {
		var f *os.File
		var addr string
		switch s.kind {
		case "tcp":
			ln, err := net.Listen("tcp", s.addr)
			if err != nil {
				t.Fatalf("listen %s: %v", s.addr, err)
			}
			f, addr = fileOf(t, ln.(*net.TCPListener)), ln.Addr().String()
			ln.Close()
		case "unix":
			ln, err := net.Listen("unix", filepath.Join(t.TempDir(), strconv.Itoa(i)))
			if err != nil {
				t.Fatalf("listen unix: %v", err)
			}
			f, addr = fileOf(t, ln.(*net.UnixListener)), ln.Addr().String()
			ln.Close()
		case "conn":
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatalf("listen: %v", err)
			}
			t.Cleanup(func() { ln.Close() })
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			f, addr = fileOf(t, c.(*net.TCPConn)), c.LocalAddr().String()
			c.Close()
		}
		files, bound = append(files, renamed(t, f, s.name)), append(bound, addr)
	}
	return files, bound
}

// fileOf is a socket's own descriptor as a file.
func fileOf(t *testing.T, s interface{ File() (*os.File, error) }) *os.File {
	t.Helper()
	f, err := s.File()
	if err != nil {
		t.Fatalf("socket file: %v", err)
	}
	return f
}

// renamed is f under the name systemd gives it; f is closed.
func renamed(t *testing.T, f *os.File, name string) *os.File {
	t.Helper()
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatalf("dup: %v", err)
	}
	return os.NewFile(uintptr(fd), name)
}

// portOf is the port of a bound address.
func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("bound address %q: %v", addr, err)
	}
	return port
}

func TestClaimSockets(t *testing.T) {
	kubelet := passedSocket{name: SocketKubelet, kind: "tcp", addr: "127.0.0.1:0"}
	pods := passedSocket{name: SocketPods, kind: "tcp", addr: "127.0.0.1:0"}
	for _, tt := range []struct {
		name   string
		passed []passedSocket
		// doors are the doors' addresses from where the sockets are bound.
		doors func(bound []string) map[string]string
		// want is what the error says, each part; none for success.
		want []string
	}{
		{"kubelet door takes its socket", []passedSocket{kubelet},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: b[0]} }, nil},
		{"two doors, each its own", []passedSocket{pods, kubelet},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: b[1], SocketPods: b[0]} }, nil},
		{"name agrees with its address", []passedSocket{kubelet},
			func(b []string) map[string]string {
				return map[string]string{SocketKubelet: "localhost:" + portOf(t, b[0])}
			}, nil},
		{"wildcard door, wildcard socket", []passedSocket{{name: SocketKubelet, kind: "tcp", addr: "0.0.0.0:0"}},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: ":" + portOf(t, b[0])} }, nil},
		{"other port", []passedSocket{kubelet},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: "127.0.0.1:1"} },
			[]string{"door listen-address is 127.0.0.1:1", "bound to 127.0.0.1:", "not 1"}},
		{"other host", []passedSocket{kubelet},
			func(b []string) map[string]string {
				return map[string]string{SocketKubelet: "127.0.0.2:" + portOf(t, b[0])}
			}, []string{"door listen-address is 127.0.0.2:", "host 127.0.0.1, not 127.0.0.2"}},
		{"specific door, wildcard socket", []passedSocket{{name: SocketKubelet, kind: "tcp", addr: "0.0.0.0:0"}},
			func(b []string) map[string]string {
				return map[string]string{SocketKubelet: "127.0.0.1:" + portOf(t, b[0])}
			}, []string{"passed by systemd is bound to [::]:", "not 127.0.0.1"}},
		{"door without its socket", []passedSocket{kubelet},
			func(b []string) map[string]string {
				return map[string]string{SocketKubelet: b[0], SocketPods: "169.254.20.10:10551"}
			}, []string{"door secure-listen-address is 169.254.20.10:10551", `no socket named "secure-listen-address"`}},
		{"socket of a door that is off", []passedSocket{kubelet, {name: SocketInsecure, kind: "tcp", addr: "127.0.0.1:0"}},
			func(b []string) map[string]string {
				return map[string]string{SocketKubelet: b[0], SocketInsecure: ""}
			}, []string{`socket named "insecure-listen-address" (127.0.0.1:`, "door insecure-listen-address is off"}},
		{"socket no door takes", []passedSocket{{name: "apiserver-lite.socket", kind: "tcp", addr: "127.0.0.1:0"}},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: ""} },
			[]string{`socket named "apiserver-lite.socket" (127.0.0.1:`, "no door takes"}},
		{"two sockets of one name", []passedSocket{kubelet, kubelet},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: b[0]} },
			[]string{`two sockets named "listen-address"`}},
		{"unix socket", []passedSocket{{name: SocketKubelet, kind: "unix"}},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: "127.0.0.1:10550"} },
			[]string{"not a TCP socket"}},
		{"connected socket", []passedSocket{{name: SocketKubelet, kind: "conn"}},
			func(b []string) map[string]string { return map[string]string{SocketKubelet: b[0]} },
			[]string{"not listening"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files, bound := pass(t, tt.passed)
			doors := tt.doors(bound)
			s, err := ClaimSockets(doors, files)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("ClaimSockets: got %v, want no error", err)
				}
				checkServesPassed(t, s, doors, tt.passed, bound)
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("ClaimSockets: got no error, want one saying %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ClaimSockets: got %q, want it to say %q", err, w)
				}
			}
		})
	}
}

// checkServesPassed checks that each door listens on the socket passed
// for it: a connection to where that socket is bound reaches the door.
func checkServesPassed(t *testing.T, s *Sockets, doors map[string]string, passed []passedSocket, bound []string) {
	t.Helper()
	for i, p := range passed {
		if !s.Passed(p.name) {
			t.Errorf("Passed(%q): got false, want true", p.name)
		}
		ln, err := s.Listen(p.name, doors[p.name])
		if err != nil {
			t.Fatalf("Listen(%q): %v", p.name, err)
		}
		dialed := "127.0.0.1:" + portOf(t, bound[i])
		checkAccepts(t, ln, dialed)
		ln.Close()
	}
}

// checkAccepts checks that ln accepts a connection dialed to addr.
func checkAccepts(t *testing.T, ln net.Listener, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	accepted := make(chan error, 1)
	go func() {
		a, err := ln.Accept()
		if err == nil {
			a.Close()
		}
		accepted <- err
	}()
	select {
	case err := <-accepted:
		if err != nil {
			t.Errorf("accept on %s: %v", ln.Addr(), err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the door's listener %s did not accept the connection to %s", ln.Addr(), addr)
	}
}

func TestSocketsWithoutSystemd(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
	}{
		{"nothing passed", map[string]string{}},
		{"passed to another process", map[string]string{"LISTEN_PID": "1", "LISTEN_FDS": "1", "LISTEN_FDNAMES": SocketKubelet}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
				t.Setenv(k, tt.env[k])
			}
			s, err := InheritSockets(map[string]string{SocketKubelet: "127.0.0.1:0"})
			if err != nil {
				t.Fatalf("InheritSockets: got %v, want no error", err)
			}
			if s.Passed(SocketKubelet) {
				t.Errorf("Passed: got true, want false")
			}
			ln, err := s.Listen(SocketKubelet, "127.0.0.1:0")
			if err != nil {
				t.Fatalf("Listen: got %v, want the door's own socket", err)
			}
			defer ln.Close()
			checkAccepts(t, ln, ln.Addr().String())
		})
	}
}

// A door without a socket name (the pool door) opens its own socket even
// when systemd passed the others'.
func TestUnnamedDoorOpensItsOwn(t *testing.T) {
	files, bound := pass(t, []passedSocket{{name: SocketKubelet, kind: "tcp", addr: "127.0.0.1:0"}})
	s, err := ClaimSockets(map[string]string{SocketKubelet: bound[0]}, files)
	if err != nil {
		t.Fatalf("ClaimSockets: got %v, want no error", err)
	}
	defer s.Close()
	ln, err := s.Listen("", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen of an unnamed door: got %v, want its own socket", err)
	}
	defer ln.Close()
	if ln.Addr().String() == bound[0] {
		t.Errorf("unnamed door: got the passed socket %s, want its own", bound[0])
	}
	checkAccepts(t, ln, ln.Addr().String())
}
