//go:build e2e

package fleet

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// TestLeaseFailuresByPhase: a failure counts and is kept in the phase the
// run is in, a round's start apart from the steady state, and the report
// says why each phase's renewals failed, and how many attempts were made
// again.
func TestLeaseFailuresByPhase(t *testing.T) {
	r := soundFleet()
	r.enterStep("apiserver-lite steady state, round 2")
	r.enterPhase(lease.RoundStart)
	r.leaseFails[bench.LiteSide].Fail("fleet-003", apierrors.NewServiceUnavailable("not ready"))
	r.leaseFails[bench.LiteSide].Fail("fleet-004", apierrors.NewServiceUnavailable("not ready"))
	r.leaseFails[bench.LiteSide].Retried("fleet-003")
	r.enterPhase(lease.Steady)
	r.leaseFails[bench.KubeSide].Fail("fleet-005", errors.New("http2: client connection lost"))
	for _, c := range []struct {
		side  int
		phase lease.Phase
		want  int64
	}{{bench.LiteSide, lease.RoundStart, 2}, {bench.LiteSide, lease.Steady, 0}, {bench.KubeSide, lease.Steady, 1}, {bench.KubeSide, lease.RoundStart, 0}} {
		if got := r.leaseFails[c.side].In(c.phase); got != c.want {
			t.Errorf("%s, %s: got %d failures, want %d", sideLabel(c.side), c.phase, got, c.want)
		}
	}
	wantInReport(t, r,
		"| round start | 2 (1) | 0 (0) |",
		"| steady state | 0 (0) | 1 (0) |",
		"Failed Lease renewals, round start, apiserver-lite side: 2 (2 kept with their error):",
		"- 2 × `HTTP 503 ServiceUnavailable: not ready`",
		`- fleet-003, `,
		`(step "apiserver-lite steady state, round 2"): `+"`HTTP 503 ServiceUnavailable: not ready`",
		"Failed Lease renewals, steady state, direct side: 1",
		"- 1 × `no HTTP status: http2: client connection lost`",
		"no failed Lease renewal | yes (0 failed) |",
	)
}
