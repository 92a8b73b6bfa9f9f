package door

import (
	"crypto/tls"
	"errors"
	"runtime"
	"slices"
)

// handshakesPerCPU bounds the TLS handshakes a door runs at once (per CPU
// the process may use); the others wait, within their deadline, without
// taking CPU. A flood of new connections then costs the door a few cores'
// worth of handshakes at most, and the requests on established
// connections (the kubelet's) keep being scheduled.
const handshakesPerCPU = 2

// errHandshakeBusy fails a handshake that found no slot before its
// deadline.
var errHandshakeBusy = errors.New("too many TLS handshakes in progress")

// handshakeSlots is the size of a door's handshake semaphore.
func handshakeSlots() int { return handshakesPerCPU * runtime.GOMAXPROCS(0) }

// acquireHandshake waits for a handshake slot until dc's handshake
// deadline.
func (l *Limiter) acquireHandshake(dc *doorConn) bool {
	select {
	case l.handshakes <- struct{}{}:
		dc.handshakeSlot.Store(true)
		return true
	default:
	}
	t := l.clock.NewTimer(dc.handshakeBy.Sub(l.clock.Now()))
	defer t.Stop()
	select {
	case l.handshakes <- struct{}{}:
		dc.handshakeSlot.Store(true)
		return true
	case <-t.C():
		return false
	}
}

// releaseHandshake gives back dc's handshake slot, once.
func (l *Limiter) releaseHandshake(dc *doorConn) {
	if dc.handshakeSlot.CompareAndSwap(true, false) {
		<-l.handshakes
	}
}

// TLSConfig returns base for a door served through l's Listener: each
// handshake also reports to l whether it presented this node's client
// certificate, and one accepted into the node's reserve fails unless it
// did. base's own GetConfigForClient (reloaded files) is kept.
func (l *Limiter) TLSConfig(base *tls.Config) *tls.Config {
	out := base.Clone()
	out.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		cfg := base
		if base.GetConfigForClient != nil {
			c, err := base.GetConfigForClient(hello)
			if err != nil {
				return nil, err
			}
			if c != nil {
				cfg = c
			}
		}
		dc := connOf(hello.Conn)
		if dc == nil {
			return cfg, nil
		}
		if !l.acquireHandshake(dc) {
			l.refusals.note("handshake refused: too many in progress")
			return nil, errHandshakeBusy
		}
		per := cfg.Clone()
		per.GetConfigForClient = nil
		per.VerifyConnection = func(cs tls.ConnectionState) error { return l.verifyConn(dc, cs) }
		return per, nil
	}
	return out
}

// verifyConn ends dc's handshake deadline and refuses a reserved
// connection that does not present this node's certificate.
func (l *Limiter) verifyConn(dc *doorConn, cs tls.ConnectionState) error {
	dc.handshook.Store(true)
	l.releaseHandshake(dc)
	if !dc.reserved || l.nodeCertificate(cs) {
		return nil
	}
	l.refusals.note("connection refused: only this node's certificate may use the reserve")
	return errReserveOnly
}

// nodeCertificate is true when cs carries a verified client certificate
// of this node (CN system:node:<name>, O system:nodes), as the
// authenticator reads it.
func (l *Limiter) nodeCertificate(cs tls.ConnectionState) bool {
	if l.nodeName == "" || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return false
	}
	subj := cs.PeerCertificates[0].Subject
	return subj.CommonName == nodeUserPrefix+l.nodeName && slices.Contains(subj.Organization, nodesGroup)
}
