package door

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// ErrAddressNotBound is returned for a door address no interface of this
// machine holds yet (a link-local address the operator has not assigned).
var ErrAddressNotBound = errors.New("address not assigned to any interface")

// CheckBound reports whether a listener can bind addr's host: nil for a
// host this machine holds (or a wildcard or name), ErrAddressNotBound
// (wrapped) for an IP no interface holds. It binds port 0, so it never
// takes the door's own port.
func CheckBound(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("door address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsUnspecified() {
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return fmt.Errorf("%s: %w", host, ErrAddressNotBound)
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", host, err)
	}
	return ln.Close()
}
