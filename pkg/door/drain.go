package door

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DrainGrace is how long a door's shutdown keeps its connections open once
// no request is in flight, before it closes them. Shutdown sends every
// HTTP/2 connection a GOAWAY first; the grace lets the client read it, so
// a request it sends meanwhile is refused (and retried on a new connection,
// which waits in the listen backlog for the next start) rather than cut by
// a reset. net/http itself waits a second after the GOAWAY of an idle
// connection (its goAwayTimeout, a guess at a round trip over any
// network), and a client such as the kubelet never closes an idle
// connection on GOAWAY, so every restart of a daemon with a connected
// client took at least that second. A door's clients are on this node:
// their round trip is well under a millisecond.
const DrainGrace = 50 * time.Millisecond

// Drain counts what is busy on one door's server (requests being served,
// and connections that have not yet reached their first request, whose
// TLS handshake may be under way), so that its shutdown can close the
// connections as soon as nothing is busy instead of waiting for net/http's
// HTTP/2 GOAWAY timeout. Wrap the server's handler with Handler, call
// ConnState from the server's ConnState, and stop the server with
// Shutdown.
type Drain struct {
	clock clock.WithTicker // immutable

	mu sync.Mutex
	// inFlight counts requests being served and fresh connections.
	// Guarded by mu.
	inFlight int
	// fresh are the connections in http.StateNew. Guarded by mu.
	fresh map[net.Conn]struct{}
	// idle is closed when inFlight drops to zero and replaced when it
	// rises from zero. Guarded by mu.
	idle chan struct{}
}

// NewDrain returns a Drain timing its grace on c (the real clock if nil).
func NewDrain(c clock.WithTicker) *Drain {
	if c == nil {
		c = clock.RealClock{}
	}
	idle := make(chan struct{})
	close(idle)
	return &Drain{clock: c, idle: idle, fresh: map[net.Conn]struct{}{}}
}

// ConnState counts a connection as busy from its acceptance until it
// leaves http.StateNew: net/http's own shutdown keeps such a connection
// (for up to 5 s), since its first request may be on its way.
func (d *Drain) ConnState(c net.Conn, s http.ConnState) {
	if s == http.StateNew {
		d.mu.Lock()
		d.fresh[c] = struct{}{}
		d.mu.Unlock()
		d.enter()
		return
	}
	d.mu.Lock()
	_, ok := d.fresh[c]
	delete(d.fresh, c)
	d.mu.Unlock()
	if ok {
		d.leave()
	}
}

// Handler counts h's requests while they are served.
func (d *Drain) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.enter()
		defer d.leave()
		h.ServeHTTP(w, r)
	})
}

func (d *Drain) enter() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight == 0 {
		d.idle = make(chan struct{})
	}
	d.inFlight++
}

func (d *Drain) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight--
	if d.inFlight == 0 {
		close(d.idle)
	}
}

// idleNow returns a channel closed while no request is in flight, and
// whether none is now.
func (d *Drain) idleNow() (<-chan struct{}, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.idle, d.inFlight == 0
}

// Shutdown stops srv as http.Server.Shutdown does (listeners closed, idle
// connections closed, GOAWAY on HTTP/2 ones, in-flight requests finished)
// but closes the connections left once no request has been in flight for
// DrainGrace, rather than waiting for each HTTP/2 connection's GOAWAY
// timeout. It returns when srv has stopped or ctx ends.
func (d *Drain) Shutdown(ctx context.Context, srv *http.Server) error {
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	for {
		idle, _ := d.idleNow()
		select {
		case err := <-done:
			return err
		case <-idle:
		}
		t := d.clock.NewTimer(DrainGrace)
		select {
		case err := <-done:
			t.Stop()
			return err
		case <-t.C():
		}
		if _, ok := d.idleNow(); !ok {
			continue // a request came in meanwhile: let it finish
		}
		_ = srv.Close() // Shutdown then returns
		return <-done
	}
}
