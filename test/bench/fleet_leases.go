//go:build e2e

package bench

import (
	"bytes"
	"fmt"
	"sync/atomic"
)

// leasePhase is the part of a run a failed Lease renewal is counted in.
type leasePhase int32

// The phases of a run, in the order the report lists them.
const (
	// phaseSteady is everything but the restarts.
	phaseSteady leasePhase = iota
	// phaseCloudRestart is from kube-apiserver's stop until every node
	// serves a change made after it.
	phaseCloudRestart
	// phaseDaemonRestart is from the first SIGTERM of the fleet-wide
	// apiserver-lite restart until every node serves a change made after
	// it (the direct side has no daemon: always zero there).
	phaseDaemonRestart
	leasePhases
)

var leasePhaseNames = [leasePhases]string{"steady state", "cloud restart", "daemon restart"}

// sideLeases counts one side's failed Lease renewals by the phase the run
// is in when each fails.
type sideLeases struct {
	// phase is the current phase; failed the count per phase.
	phase  atomic.Int32
	failed [leasePhases]atomic.Int64
}

// enter makes the following failures count in p.
func (s *sideLeases) enter(p leasePhase) { s.phase.Store(int32(p)) }

// Add counts n failures in the current phase (the renewal loops' counter).
func (s *sideLeases) Add(n int64) int64 { return s.failed[s.phase.Load()].Add(n) }

// Load is the failures of the whole run.
func (s *sideLeases) Load() int64 {
	var n int64
	for p := range leasePhases {
		n += s.failed[p].Load()
	}
	return n
}

// in is the failures counted in p.
func (s *sideLeases) in(p leasePhase) int64 { return s.failed[p].Load() }

// enterPhase moves both sides into p.
func (r *fleetResults) enterPhase(p leasePhase) {
	for i := range r.leaseFails {
		r.leaseFails[i].enter(p)
	}
}

// writeLeaseFailures writes the failed Lease renewals per phase and side.
func (r *fleetResults) writeLeaseFailures(b *bytes.Buffer) {
	b.WriteString("| failed Lease renewals | apiserver-lite on every node (doors on held sockets) | kubelet read set direct |\n| --- | --- | --- |\n")
	for p := range leasePhases {
		fmt.Fprintf(b, "| %s | %d | %d |\n", leasePhaseNames[p], r.leaseFails[liteSide].in(p), r.leaseFails[kubeSide].in(p))
	}
	fmt.Fprintf(b, "\nNo Lease renewal failed across the daemon restart (the smoke run fails otherwise): %s.\n\n",
		verdict(r.leaseFails[liteSide].in(phaseDaemonRestart) == 0))
}

// checkLeases fails a run in which a Lease renewal failed across the
// daemon restart: the held sockets must queue the kubelet's requests.
func (r *fleetResults) checkLeases() []error {
	if n := r.leaseFails[liteSide].in(phaseDaemonRestart); n > 0 {
		return []error{fmt.Errorf("%d failed Lease renewals across the daemon restart, want none", n)}
	}
	return nil
}
