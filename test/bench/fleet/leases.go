//go:build e2e

package fleet

import (
	"bytes"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"sync"
	"sync/atomic"
	"time"
)

// leasePhase is the part of a run a failed Lease renewal is counted in.
type leasePhase int32

// The phases of a run, in the order the report lists them.
const (
	// phaseSteady is the measured steady-state windows and the moments
	// between steps: everything but a round's start and the restarts.
	phaseSteady leasePhase = iota
	// phaseRoundStart is a round's start: from its apiserver-lites' starts
	// (the direct side: its read sets opening) until its window opens,
	// the settling included.
	phaseRoundStart
	// phaseCloudRestart is from kube-apiserver's stop until every node
	// serves a change made after it.
	phaseCloudRestart
	// phaseDaemonRestart is from the first SIGTERM of the fleet-wide
	// apiserver-lite restart until every node serves a change made after
	// it (the direct side has no daemon: always zero there).
	phaseDaemonRestart
	leasePhases
)

var leasePhaseNames = [leasePhases]string{"steady state", "round start", "cloud restart", "daemon restart"}

// sideLeases counts one side's failed Lease renewals by the phase the run
// is in when each fails.
type sideLeases struct {
	// phase is the current phase; failed the count per phase.
	phase  atomic.Int32
	failed [leasePhases]atomic.Int64

	mu sync.Mutex
	// entered is when the current phase was entered and step the run's
	// step then. Guarded by mu.
	entered time.Time
	step    string
	// kept are the first maxLeaseFailuresKept failures of each phase, in
	// order. Guarded by mu.
	kept [leasePhases][]leaseFailure
}

// enter makes the following failures count in p.
func (s *sideLeases) enter(p leasePhase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase.Store(int32(p))
	s.entered = time.Now()
}

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

// enterStep notes the run's step the following failures are made in.
func (r *fleetResults) enterStep(name string) {
	for i := range r.leaseFails {
		s := &r.leaseFails[i]
		s.mu.Lock()
		s.step = name
		s.mu.Unlock()
	}
}

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
		fmt.Fprintf(b, "| %s | %d | %d |\n", leasePhaseNames[p], r.leaseFails[bench.LiteSide].in(p), r.leaseFails[bench.KubeSide].in(p))
	}
	b.WriteString("\nA round's start is from its apiserver-lites' starts (the direct side: its read sets opening) until its window opens; " +
		"the steady state is the windows and the moments between steps.\n\n")
	r.writeLeaseCauses(b)
	fmt.Fprintf(b, "\nNo Lease renewal failed across the daemon restart (the smoke run fails otherwise): %s.\n\n",
		bench.Verdict(r.leaseFails[bench.LiteSide].in(phaseDaemonRestart) == 0))
}

// checkLeases fails a run in which a Lease renewal failed across the
// daemon restart: the held sockets must queue the kubelet's requests.
func (r *fleetResults) checkLeases() []error {
	if n := r.leaseFails[bench.LiteSide].in(phaseDaemonRestart); n > 0 {
		return []error{fmt.Errorf("%d failed Lease renewals across the daemon restart, want none", n)}
	}
	return nil
}
