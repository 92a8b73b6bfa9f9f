//go:build e2e

package fleet

import (
	"bytes"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// enterStep notes the run's step the following failures are made in.
func (r *fleetResults) enterStep(name string) {
	for i := range r.leaseFails {
		r.leaseFails[i].Step(name)
	}
}

// enterPhase moves both sides into p.
func (r *fleetResults) enterPhase(p lease.Phase) {
	for i := range r.leaseFails {
		r.leaseFails[i].Enter(p)
	}
}

// writeLeaseFailures writes the failed Lease renewals per phase and side.
func (r *fleetResults) writeLeaseFailures(b *bytes.Buffer) {
	b.WriteString("| failed Lease renewals (attempts made again at once) | apiserver-lite on every node (doors on held sockets) | kubelet read set direct |\n| --- | --- | --- |\n")
	lite, kube := &r.leaseFails[bench.LiteSide], &r.leaseFails[bench.KubeSide]
	for p := range lease.Phases {
		fmt.Fprintf(b, "| %s | %d (%d) | %d (%d) |\n", p, lite.In(p), lite.RetriedIn(p), kube.In(p), kube.RetriedIn(p))
	}
	b.WriteString("\nA renewal is made as the kubelet's lease controller makes it: up to 5 attempts at once, the Lease read again after a Conflict; " +
		"it fails when every attempt did. A round's start is from its apiserver-lites' starts (the direct side: its read sets opening) until its window opens; " +
		"the steady state is the windows and the moments between steps.\n\n")
	for p := range lease.Phases {
		for _, side := range []int{bench.LiteSide, bench.KubeSide} {
			r.leaseFails[side].WriteCauses(b, p, sideLabel(side))
		}
	}
	fmt.Fprintf(b, "\nNo Lease renewal failed across the daemon restart (the smoke run fails otherwise): %s.\n\n",
		bench.Verdict(r.leaseFails[bench.LiteSide].In(lease.DaemonRestart) == 0))
}

// checkLeases fails a run in which a Lease renewal failed across the
// daemon restart: the held sockets must queue the kubelet's requests.
func (r *fleetResults) checkLeases() []error {
	if n := r.leaseFails[bench.LiteSide].In(lease.DaemonRestart); n > 0 {
		return []error{fmt.Errorf("%d failed Lease renewals across the daemon restart, want none", n)}
	}
	return nil
}
