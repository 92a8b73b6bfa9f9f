//go:build e2e

package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

const (
	// maxLeaseFailuresKept is how many failed renewals of each phase and
	// side are kept with their error and time; the rest are only counted.
	maxLeaseFailuresKept = 100
	// leaseFailuresListed is how many kept failures of each phase and side
	// the report lists one by one.
	leaseFailuresListed = 5
	// leaseCauseMax bounds a cause's length in the report, in bytes.
	leaseCauseMax = 120
)

// leaseFailer counts a node's failed Lease renewal and keeps its error.
type leaseFailer interface {
	fail(node string, err error)
}

// leaseFailure is one failed Lease renewal.
type leaseFailure struct {
	node string
	// step is the run's step and since how long after its phase was
	// entered the renewal failed.
	step  string
	since time.Duration
	// cause is the error, its HTTP status first when the cloud or the
	// daemon answered one.
	cause string
}

// fail counts a failed renewal in the current phase and keeps it.
func (s *sideLeases) fail(node string, err error) { s.failCause(node, leaseCause(err)) }

// failCause counts a failed renewal whose error is already named by
// leaseCause (a direct node's process names its own).
func (s *sideLeases) failCause(node, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := leasePhase(s.phase.Load())
	s.failed[p].Add(1)
	if len(s.kept[p]) < maxLeaseFailuresKept {
		s.kept[p] = append(s.kept[p], leaseFailure{node: node, step: s.step, since: time.Since(s.entered), cause: cause})
	}
}

// failures are the kept failures of phase p.
func (s *sideLeases) failures(p leasePhase) []leaseFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.kept[p])
}

var (
	// addrPattern matches the host:port pairs in a network error and
	// nodePattern the fleet's node names, which differ from node to node
	// and would split one cause into many.
	addrPattern = regexp.MustCompile(`\[?[0-9a-fA-F.:]+\]?:[0-9]+`)
	nodePattern = regexp.MustCompile(`fleet-[0-9]+`)
)

// leaseCause names err the same way for every node: an API status as its
// code, reason and message; a transport error as its method and cause,
// without the URL; addresses and node names replaced.
func leaseCause(err error) string {
	if err == nil {
		return "no error"
	}
	var status apierrors.APIStatus
	var ue *url.Error
	var cause string
	switch {
	case errors.As(err, &status):
		st := status.Status()
		cause = fmt.Sprintf("HTTP %d %s: %s", st.Code, st.Reason, st.Message)
	case errors.As(err, &ue):
		cause = fmt.Sprintf("no HTTP status: %s: %v", ue.Op, ue.Err)
	default:
		cause = "no HTTP status: " + err.Error()
	}
	return truncateCause(nodePattern.ReplaceAllString(addrPattern.ReplaceAllString(cause, "ADDR"), "NODE"))
}

func truncateCause(s string) string {
	if len(s) <= leaseCauseMax {
		return s
	}
	return strings.ToValidUTF8(s[:leaseCauseMax], "") + "…"
}

// leaseCauses counts failures by cause.
func leaseCauses(fs []leaseFailure) map[string]int {
	out := map[string]int{}
	for _, f := range fs {
		out[f.cause]++
	}
	return out
}

// writeLeaseCauses writes, for each phase and side with a failed renewal,
// the failures by cause and the first few with their node, step and time.
func (r *fleetResults) writeLeaseCauses(b *bytes.Buffer) {
	for p := range leasePhases {
		for _, side := range []int{bench.LiteSide, bench.KubeSide} {
			n := r.leaseFails[side].in(p)
			if n == 0 {
				continue
			}
			fs := r.leaseFails[side].failures(p)
			fmt.Fprintf(b, "Failed Lease renewals, %s, %s side: %d (%d kept with their error):\n\n", leasePhaseNames[p], sideLabel(side), n, len(fs))
			causes := leaseCauses(fs)
			for _, c := range slices.Sorted(maps.Keys(causes)) {
				fmt.Fprintf(b, "- %d × `%s`\n", causes[c], c)
			}
			for _, f := range fs[:min(len(fs), leaseFailuresListed)] {
				fmt.Fprintf(b, "- %s, %s into the phase (step %q): `%s`\n", f.node, f.since.Round(time.Millisecond), f.step, f.cause)
			}
			b.WriteString("\n")
		}
	}
}
