//go:build e2e

package lease

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Phase is the part of a run a failed Lease renewal is counted in.
type Phase int32

// The phases of a run, in the order the report lists them.
const (
	// Steady is the measured steady-state windows and the moments
	// between steps: everything but a round's start and the restarts.
	Steady Phase = iota
	// RoundStart is a round's start: from its apiserver-lites' starts
	// (the direct side: its read sets opening) until its window opens,
	// the settling included.
	RoundStart
	// CloudRestart is from kube-apiserver's stop until every node serves
	// a change made after it.
	CloudRestart
	// DaemonRestart is from the first SIGTERM of the fleet-wide
	// apiserver-lite restart until every node serves a change made after
	// it (the direct side has no daemon: always zero there).
	DaemonRestart
	// Phases counts the phases.
	Phases
)

var phaseNames = [Phases]string{"steady state", "round start", "cloud restart", "daemon restart"}

// String is the phase's name in the report.
func (p Phase) String() string { return phaseNames[p] }

// maxKept is how many failed renewals of each phase and side are kept
// with their error and time; the rest are only counted.
const maxKept = 100

// failure is one failed Lease renewal.
type failure struct {
	node string
	// step is the run's step and since how long after its phase was
	// entered the renewal failed.
	step  string
	since time.Duration
	// cause is the error, its HTTP status first when the cloud or the
	// daemon answered one (see Cause).
	cause string
}

// Failures counts one side's failed Lease renewals by the phase the run
// is in when each fails. Its zero value counts in Steady.
type Failures struct {
	// phase is the current phase; failed the count per phase, retried
	// the attempts made again at once per phase.
	phase   atomic.Int32
	failed  [Phases]atomic.Int64
	retried [Phases]atomic.Int64

	mu sync.Mutex
	// entered is when the current phase was entered and step the run's
	// step then. Guarded by mu.
	entered time.Time
	step    string
	// kept are the first maxKept failures of each phase, in order.
	// Guarded by mu.
	kept [Phases][]failure
}

// Enter makes the following failures count in p.
func (s *Failures) Enter(p Phase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase.Store(int32(p))
	s.entered = time.Now()
}

// Step notes the run's step the following failures are made in.
func (s *Failures) Step(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step = name
}

// Add counts n failures in the current phase, without keeping them.
func (s *Failures) Add(n int64) int64 { return s.failed[s.phase.Load()].Add(n) }

// Load is the failures of the whole run.
func (s *Failures) Load() int64 {
	var n int64
	for p := range Phases {
		n += s.failed[p].Load()
	}
	return n
}

// In is the failures counted in p.
func (s *Failures) In(p Phase) int64 { return s.failed[p].Load() }

// Retried counts an attempt at a renewal that failed and was made again
// at once, in the current phase.
func (s *Failures) Retried(string) { s.retried[s.phase.Load()].Add(1) }

// RetriedIn is the attempts made again in p.
func (s *Failures) RetriedIn(p Phase) int64 { return s.retried[p].Load() }

// Fail counts a failed renewal in the current phase and keeps it.
func (s *Failures) Fail(node string, err error) { s.FailCause(node, Cause(err)) }

// FailCause counts a failed renewal whose error is already named by
// Cause (a direct node's process names its own).
func (s *Failures) FailCause(node, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Phase(s.phase.Load())
	s.failed[p].Add(1)
	if len(s.kept[p]) < maxKept {
		s.kept[p] = append(s.kept[p], failure{node: node, step: s.step, since: time.Since(s.entered), cause: cause})
	}
}

// keptIn are the kept failures of phase p.
func (s *Failures) keptIn(p Phase) []failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.kept[p])
}
