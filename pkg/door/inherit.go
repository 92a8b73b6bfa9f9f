package door

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"

	"github.com/coreos/go-systemd/v22/activation"
)

// Names of the listening sockets systemd passes to the daemon (socket
// activation), one per door: the FileDescriptorName= of the socket unit
// that holds the door's socket, which is the door's flag.
const (
	SocketKubelet  = "listen-address"          // the kubelet's door
	SocketPods     = "secure-listen-address"   // the pods' door
	SocketInsecure = "insecure-listen-address" // the plain-HTTP door
)

// socketNames are the names a passed socket may have, in the order errors
// list them.
var socketNames = []string{SocketKubelet, SocketPods, SocketInsecure}

// Sockets are where the doors listen: the sockets systemd passed, each
// taken by the door of its name, or, when none was passed, each door's own
// socket opened on its address. A nil *Sockets opens every door's own.
type Sockets struct {
	// passed are the claimed listeners by socket name, removed as Listen
	// hands them out; nil when systemd passed none. Used by one goroutine
	// at start-up only.
	passed map[string]net.Listener
}

// InheritSockets claims the sockets systemd passed to this process
// (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES, which it then unsets) for
// doors, the configured address of each door by socket name ("" for a
// door that is off). Without passed sockets every door listens on its own.
func InheritSockets(doors map[string]string) (*Sockets, error) {
	return ClaimSockets(doors, activation.Files(true))
}

// ClaimSockets matches passed, each named by its socket unit's
// FileDescriptorName=, to doors. Every door that is on takes the socket
// of its name, whose bound address must agree with the door's; a door
// without its socket, a socket that disagrees, is not a listening TCP
// socket, or that no door takes is a start-up error naming both. passed
// is closed either way (the listeners hold their own descriptors).
func ClaimSockets(doors map[string]string, passed []*os.File) (*Sockets, error) {
	if len(passed) == 0 {
		return &Sockets{}, nil
	}
	s := &Sockets{passed: map[string]net.Listener{}}
	var errs []error
	for _, f := range passed {
		errs = append(errs, s.claim(doors, f))
	}
	for _, name := range socketNames {
		if addr := doors[name]; addr != "" && s.passed[name] == nil && !slices.ContainsFunc(passed, named(name)) {
			errs = append(errs, fmt.Errorf("door %s is %s but systemd passed no socket named %q (%s): "+
				"add a socket unit with ListenStream=%s and FileDescriptorName=%s, or turn the door off",
				name, addr, name, passedNames(passed), addr, name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(fmt.Errorf("sockets passed by systemd: %w", err), s.Close())
	}
	return s, nil
}

// claim takes f for the door of its name, or says why not; f is closed.
func (s *Sockets) claim(doors map[string]string, f *os.File) error {
	defer f.Close()
	name := f.Name()
	addr, known := doors[name]
	switch {
	case !known || !slices.Contains(socketNames, name):
		return fmt.Errorf("systemd passed a socket named %q (%s) that no door takes: name it with FileDescriptorName= %s, %s or %s",
			name, boundAddr(f), SocketKubelet, SocketPods, SocketInsecure)
	case s.passed[name] != nil:
		return fmt.Errorf("systemd passed two sockets named %q (%s and %s): one per door", name, s.passed[name].Addr(), boundAddr(f))
	case addr == "":
		return fmt.Errorf("systemd passed a socket named %q (%s) but door %s is off: set --%s, or stop passing the socket",
			name, boundAddr(f), name, name)
	}
	ln, err := listenerOf(f)
	if err != nil {
		return fmt.Errorf("socket %q passed by systemd for door %s (%s): %w", name, name, addr, err)
	}
	if err := addressAgrees(addr, ln.Addr()); err != nil {
		return errors.Join(fmt.Errorf("door %s is %s but the socket %q passed by systemd is bound to %s: %w; "+
			"make the socket unit's ListenStream= and --%s agree", name, addr, name, ln.Addr(), err, name), ln.Close())
	}
	s.passed[name] = ln
	return nil
}

// Passed reports whether the door of socket name takes a passed socket.
func (s *Sockets) Passed(name string) bool {
	return s != nil && s.passed[name] != nil
}

// Listen returns the listener of the door of socket name at addr: the
// passed socket when systemd passed sockets, else its own opened on addr.
// A door without a socket name (the pool door: its followers read the
// cloud while it restarts) always opens its own.
func (s *Sockets) Listen(name, addr string) (net.Listener, error) {
	if s == nil || s.passed == nil || name == "" {
		return net.Listen("tcp", addr)
	}
	ln := s.passed[name]
	if ln == nil {
		return nil, fmt.Errorf("door %s (%s): no socket passed by systemd", name, addr)
	}
	delete(s.passed, name)
	return ln, nil
}

// Close closes the passed sockets no door has taken.
func (s *Sockets) Close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for name, ln := range s.passed {
		errs = append(errs, ln.Close())
		delete(s.passed, name)
	}
	return errors.Join(errs...)
}

// listenerOf makes a TCP listener of a passed listening socket.
func listenerOf(f *os.File) (net.Listener, error) {
	if err := listening(f); err != nil {
		return nil, err
	}
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("not a listening socket: %w", err)
	}
	if _, ok := ln.Addr().(*net.TCPAddr); !ok {
		return nil, errors.Join(fmt.Errorf("not a TCP socket (%s %s): use ListenStream= with an address", ln.Addr().Network(), ln.Addr()), ln.Close())
	}
	return ln, nil
}

// listening fails for a socket that does not accept connections (never
// listened on, or connected).
func listening(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("not a socket: %w", err)
	}
	var accepts int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		accepts, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN)
	}); err != nil {
		return fmt.Errorf("not a socket: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("not a socket: %w", serr)
	}
	if accepts == 0 {
		return errors.New("not listening: use ListenStream=")
	}
	return nil
}

// addressAgrees fails when a door configured at want would not listen
// where got is bound: another port, or another host (a name agrees with
// any of its addresses, an empty or unspecified host with an unspecified
// address of either family).
func addressAgrees(want string, got net.Addr) error {
	tcp, ok := got.(*net.TCPAddr)
	if !ok {
		return fmt.Errorf("%s is not a TCP address", got)
	}
	host, portStr, err := net.SplitHostPort(want)
	if err != nil {
		return fmt.Errorf("door address: %w", err)
	}
	port, err := net.LookupPort("tcp", portStr)
	if err != nil {
		return fmt.Errorf("door address: %w", err)
	}
	if port != tcp.Port {
		return fmt.Errorf("port %d, not %d", tcp.Port, port)
	}
	ips, err := hostIPs(host)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(ips, func(ip net.IP) bool { return sameHost(ip, tcp.IP) }) {
		return nil
	}
	return fmt.Errorf("host %s, not %s", tcp.IP, host)
}

// hostIPs are the addresses a door's host names; nil for every address.
func hostIPs(host string) ([]net.IP, error) {
	if host == "" {
		return []net.IP{net.IPv4zero}, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil, fmt.Errorf("door host %s: %w", host, err)
	}
	return ips, nil
}

// sameHost reports whether a door at want listens where got is bound.
func sameHost(want, got net.IP) bool {
	if want.IsUnspecified() {
		return got.IsUnspecified()
	}
	return want.Equal(got)
}

// named matches a passed file by its socket name.
func named(name string) func(*os.File) bool {
	return func(f *os.File) bool { return f.Name() == name }
}

// passedNames lists the passed sockets' names for an error.
func passedNames(passed []*os.File) string {
	out := "passed:"
	for _, f := range passed {
		out += " " + strconv.Quote(f.Name())
	}
	return out
}

// boundAddr is where a passed socket is bound, for an error.
func boundAddr(f *os.File) string {
	rc, err := f.SyscallConn()
	if err != nil {
		return "not a socket"
	}
	var sa syscall.Sockaddr
	var serr error
	if err := rc.Control(func(fd uintptr) { sa, serr = syscall.Getsockname(int(fd)) }); err != nil || serr != nil {
		return "not a socket"
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *syscall.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *syscall.SockaddrUnix:
		return "unix " + a.Name
	}
	return "unknown address"
}
