package door

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// PodsDoorAddress is the pods' door's address (secure-listen-address) as
// a specific IP address and port.
func PodsDoorAddress(addr string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || ap.Addr().IsUnspecified() || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("secure-listen-address %q is not a specific IP address and port", addr)
	}
	return ap, nil
}

// BootstrapIPs are the bootstrapped certificate's IP SANs: the pods'
// door's address (podsDoor) when specific and not link-local, then the
// extra ones. A link-local door address (169.254.0.0/16, fe80::/10) is
// usually the same on every node, so one node's key would serve on all:
// it is named only when extra lists it, the operator's word that it is
// this node's alone.
func BootstrapIPs(podsDoor string, extra []string) []net.IP {
	var ips []net.IP
	if ap, err := PodsDoorAddress(podsDoor); err == nil && !ap.Addr().IsLinkLocalUnicast() {
		ips = append(ips, net.IP(ap.Addr().Unmap().AsSlice()))
	}
	for _, s := range extra {
		if ip := net.ParseIP(s); ip != nil && !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	return ips
}

// SharedAddressWarning is the warning for a bootstrapped pods' door at a
// link-local address its certificate (BootstrapIPs) does not name; ""
// when there is none.
func SharedAddressWarning(podsDoor string, extra []string) string {
	ap, err := PodsDoorAddress(podsDoor)
	if err != nil || !ap.Addr().IsLinkLocalUnicast() {
		return ""
	}
	door := net.IP(ap.Addr().Unmap().AsSlice())
	if slices.ContainsFunc(BootstrapIPs(podsDoor, extra), door.Equal) {
		return ""
	}
	return fmt.Sprintf("secure-listen-address %s is link-local, which is usually shared by every node: the bootstrapped "+
		"certificate leaves it out, so clients at that address cannot verify the door; give the door a per-node address "+
		"(the node's IP) or list the address in tls-bootstrap-ip-sans if it is this node's alone", ap.Addr())
}
