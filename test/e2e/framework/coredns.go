//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// corefileFmt serves the cluster.local zone from CoreDNS's kubernetes
// plugin, which reads the API through a kubeconfig instead of in-cluster
// config, on one loopback port (UDP and TCP). %d is the port, %s the
// kubeconfig's path.
const corefileFmt = `.:%d {
    bind 127.0.0.1
    errors
    log
    kubernetes cluster.local {
        kubeconfig %s
    }
}
`

// dnsQueryTimeout bounds one DNS query to CoreDNS.
const dnsQueryTimeout = 2 * time.Second

// dnsMessageMax is the largest DNS answer read over UDP, in bytes.
const dnsMessageMax = 4096

// freePortAttempts bounds the search for a port free for both UDP and TCP.
const freePortAttempts = 20

// StartCoreDNS starts CoreDNS (built by test/tools/build.sh) with its
// kubernetes plugin reading through kubeconfig, on a free loopback port,
// and returns its address. After its process is killed, a call starts it
// again with the same Corefile and port; kubeconfig is then ignored. It
// does not wait; see LookupA.
func (c *Cluster) StartCoreDNS(kubeconfig string) string {
	c.t.Helper()
	if c.coredns == nil {
		bin := c.Bins.CoreDNS
		if err := checkExecutable(bin); err != nil {
			c.t.Fatalf("%v (build it with test/tools/build.sh)", err)
		}
		port := c.mustFreeDNSPort()
		corefile := filepath.Join(c.Dir, "Corefile")
		if err := os.WriteFile(corefile, fmt.Appendf(nil, corefileFmt, port, kubeconfig), 0o600); err != nil {
			c.t.Fatalf("write Corefile: %v", err)
		}
		c.coredns = c.newProcess("coredns", bin, "-conf", corefile)
		c.corednsAddr = loopback(port)
	}
	c.startProcess(c.coredns)
	return c.corednsAddr
}

// CoreDNSProcess returns the CoreDNS process, or nil before StartCoreDNS.
func (c *Cluster) CoreDNSProcess() *Process {
	return c.coredns
}

// mustFreeDNSPort returns a loopback port that was free a moment ago for
// both TCP and UDP, as CoreDNS listens on both.
func (c *Cluster) mustFreeDNSPort() int {
	c.t.Helper()
	for range freePortAttempts {
		port := c.mustFreePort()
		pc, err := net.ListenPacket("udp", loopback(port))
		if err != nil {
			continue
		}
		pc.Close()
		return port
	}
	c.t.Fatalf("find a port free for TCP and UDP: none in %d attempts", freePortAttempts)
	return 0
}

// LookupA asks the DNS server at addr (UDP) for the A records of name, a
// fully qualified name, and returns them; an answer without records is an
// error naming its RCODE.
func LookupA(ctx context.Context, addr, name string) ([]netip.Addr, error) {
	q, err := dnsmessage.NewName(name)
	if err != nil {
		return nil, fmt.Errorf("dns name %q: %w", name, err)
	}
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: uint16(time.Now().UnixNano()), RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: q, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}
	query, err := msg.Pack()
	if err != nil {
		return nil, fmt.Errorf("pack dns query: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, dnsQueryTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial dns %s: %w", addr, err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if _, err := conn.Write(query); err != nil {
		return nil, fmt.Errorf("send dns query: %w", err)
	}
	buf := make([]byte, dnsMessageMax)
	n, err := conn.Read(buf)
	if err != nil {
		return nil, fmt.Errorf("read dns answer: %w", err)
	}
	return answerA(buf[:n], msg.Header.ID)
}

// answerA parses a DNS answer to query id and returns its A records.
func answerA(b []byte, id uint16) ([]netip.Addr, error) {
	var m dnsmessage.Message
	if err := m.Unpack(b); err != nil {
		return nil, fmt.Errorf("parse dns answer: %w", err)
	}
	if m.Header.ID != id {
		return nil, errors.New("dns answer to another query")
	}
	var out []netip.Addr
	for _, rr := range m.Answers {
		if a, ok := rr.Body.(*dnsmessage.AResource); ok {
			out = append(out, netip.AddrFrom4(a.A))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no A record: rcode %s", m.Header.RCode)
	}
	return out, nil
}
