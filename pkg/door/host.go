package door

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// LoopbackHost reports whether host (a Host header, with or without a port)
// names this machine's loopback: a loopback IP literal or "localhost".
// Any other name could be an attacker's DNS name rebound to 127.0.0.1.
func LoopbackHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if strings.Contains(name, "%") {
		return false // zones are never sent by browsers for loopback
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

// CheckListenAddress fails for an insecure door address that is not a
// loopback IP literal or localhost, unless allowRemote is set. An empty
// address (door off) is fine.
func CheckListenAddress(addr string, allowRemote bool) error {
	if addr == "" || allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("insecure-listen-address %q: %w", addr, err)
	}
	if !LoopbackHost(host) || host == "" {
		return fmt.Errorf("insecure-listen-address %q is not a loopback address; the insecure door acts with the node's identity, "+
			"use --secure-listen-address for remote clients or set --insecure-allow-remote", addr)
	}
	return nil
}

// checkHost answers 403 for a request whose Host header is not loopback.
func checkHost(w http.ResponseWriter, r *http.Request) bool {
	if LoopbackHost(r.Host) {
		return true
	}
	forbidden(w, fmt.Sprintf("host %q is not a loopback address: the insecure door only answers requests "+
		"addressed to 127.0.0.1, ::1 or localhost (DNS rebinding protection)", r.Host))
	return false
}
