package pool

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// holderSeparator joins a holder's node name and address in the Lease's
// holderIdentity; a node name (a DNS subdomain) never contains it.
const holderSeparator = "@"

// maxHolderLen bounds what ParseHolder reads: a node name (253) and an
// IPv6 address with brackets and port (47), with room to spare.
const maxHolderLen = 512

// ErrBadHolder means a Lease's holderIdentity does not name a pool member.
var ErrBadHolder = errors.New("not a pool member's holder identity")

// Holder is a pool member as its Lease names it: its node and the address
// of its pool door.
type Holder struct {
	Node    string
	Address string
}

// String is h as the Lease's holderIdentity: node@address.
func (h Holder) String() string { return h.Node + holderSeparator + h.Address }

// Validate checks that h's node is a DNS subdomain and its address an IP
// literal with a port.
func (h Holder) Validate() error {
	if errs := validation.IsDNS1123Subdomain(h.Node); len(errs) > 0 {
		return fmt.Errorf("%w: node %q: %s", ErrBadHolder, h.Node, strings.Join(errs, "; "))
	}
	host, port, err := net.SplitHostPort(h.Address)
	if err != nil {
		return fmt.Errorf("%w: address %q: %w", ErrBadHolder, h.Address, err)
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Errorf("%w: address %q: not an IP", ErrBadHolder, h.Address)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return fmt.Errorf("%w: address %q: bad port", ErrBadHolder, h.Address)
	}
	return nil
}

// ParseHolder reads a Lease's holderIdentity, which any member that may
// write the Lease wrote: untrusted input.
func ParseHolder(s string) (Holder, error) {
	if len(s) > maxHolderLen {
		return Holder{}, fmt.Errorf("%w: %d bytes", ErrBadHolder, len(s))
	}
	node, addr, ok := strings.Cut(s, holderSeparator)
	if !ok {
		return Holder{}, fmt.Errorf("%w: %q has no %q", ErrBadHolder, s, holderSeparator)
	}
	h := Holder{Node: node, Address: addr}
	return h, h.Validate()
}
