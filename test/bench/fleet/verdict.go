//go:build e2e

package fleet

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/cpu"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/profile"
)

// Goals of the issue, reported with their verdicts.
const (
	// goalCatchUp bounds every node's catch-up after a cloud restart.
	goalCatchUp = 15 * time.Second
	// goalRebootCatchUp bounds every node's catch-up after a restart of
	// every apiserver-lite, from the starts.
	goalRebootCatchUp = 10 * time.Second
	// goalRebootLists is the LISTs of what was held that a restart of
	// every node may cost (the new pods' objects are listed by name, as a
	// kubelet would).
	goalRebootLists = 0
)

// rebootCatchUpMet is the goal for a fleet-wide daemon restart:
// every node serves a change made during it within goalRebootCatchUp of
// the starts (the first SIGTERM), whenever the change was made.
func rebootCatchUpMet(res restartResult) bool {
	return res.caughtUp > 0 && res.caughtUp <= goalRebootCatchUp
}

// sinceChange is how long after the change was made (its last create
// answered) every node served it; not a goal, the part of the catch-up
// the daemons had the change for.
func (res restartResult) sinceChange() time.Duration { return res.caughtUp - res.changed }

// writeRounds writes kube-apiserver's CPU per round and side, with the
// median and spread.
func (r *fleetResults) writeRounds(b *bytes.Buffer) {
	b.WriteString("| kube-apiserver CPU seconds per minute | apiserver-lite on every node | kubelet read set direct |\n| --- | --- | --- |\n")
	for i, rd := range r.rounds {
		fmt.Fprintf(b, "| round %d | %.2f | %.2f |\n", i+1, rd.lite.apiCPU.Seconds(), rd.direct.apiCPU.Seconds())
	}
	l, d := r.cpuSpread(bench.LiteSide), r.cpuSpread(bench.KubeSide)
	fmt.Fprintf(b, "| **median** (least – most) | **%.2f** (%.2f – %.2f) | **%.2f** (%.2f – %.2f) |\n", l.median, l.least, l.most, d.median, d.least, d.most)
	var lc, dc []float64
	for _, rd := range r.rounds {
		lc = append(lc, rd.lite.clientCPU.Seconds())
		dc = append(dc, rd.direct.clientCPU.Seconds())
	}
	cl, cd := spreadOf(lc), spreadOf(dc)
	fmt.Fprintf(b, "| the nodes' own CPU seconds per minute (every apiserver-lite; every read set's process), on the same cores, median (least – most) | %.2f (%.2f – %.2f) | %.2f (%.2f – %.2f) |\n",
		cl.median, cl.least, cl.most, cd.median, cd.least, cd.most)
	fmt.Fprintf(b, "| cloud bytes sent per minute, round 1 | %.0f KiB | %.0f KiB |\n", r.lite.bytesPerMin/1024, r.direct.bytesPerMin/1024)
	var lp, dp []string
	for _, rd := range r.rounds {
		lp = append(lp, fmt.Sprintf("%.0f", rd.lite.phases))
		dp = append(dp, fmt.Sprintf("%.0f", rd.direct.phases))
	}
	fmt.Fprintf(b, "| seconds in which the watches a node had open at the window opened (kube-apiserver times each watch's bookmarks from its second), median node, each round | %s | %s |\n", strings.Join(lp, ", "), strings.Join(dp, ", "))
	fmt.Fprintf(b, "| TLS connections to the cloud at the end of round 1, per node | %.1f | %.1f |\n\n",
		float64(r.lite.conns)/float64(r.cfg.Nodes), float64(r.direct.conns)/float64(r.cfg.Nodes))
}

// writeRestarts writes what each restart cost the cloud.
func (r *fleetResults) writeRestarts(b *bytes.Buffer) {
	b.WriteString("| restart | requests | collection LISTs (relists) | single-object LISTs | streaming watches (`sendInitialEvents`: a state read as a LIST is, then watched) | resourceVersion checks (`limit=1`) | cloud bytes sent (LIST, GET, watch) | kube-apiserver CPU peak | every node serving a change made after it |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, x := range []struct {
		name string
		res  restartResult
		from string
	}{
		{"cloud kube-apiserver restarted, apiserver-lite on every node", r.cloudRestart, "the cloud was ready"},
		{"cloud kube-apiserver restarted, kubelet read set direct", r.directRestart, "the cloud was ready"},
		{"every apiserver-lite restarted at once (SIGTERM, then a start on its held sockets)", r.reboot, "the first SIGTERM"},
	} {
		l := x.res.lists
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %d | %.1f MiB (%.1f + %.1f + %.1f) | %.2f cores | %s after %s |\n", x.name, x.res.requests,
			l.collection, l.single, l.streams, l.checks, x.res.bytes.total()/bench.MiB, x.res.bytes.list/bench.MiB, x.res.bytes.get/bench.MiB, x.res.bytes.watch/bench.MiB,
			x.res.cpuPeak, x.res.caughtUp.Round(time.Millisecond), x.from)
	}
	fmt.Fprintf(b, "\nA cloud restart's requests, bytes and CPU peak are counted from its stop until its open watches were back to %.0f%% of before (apiserver-lite %s, direct %s after the cloud was ready; 0s: not within %s), and %s more.\n",
		100*watchesBackShare, r.cloudRestart.watchesBack.Round(time.Millisecond), r.directRestart.watchesBack.Round(time.Millisecond), watchesBackWithin, restartSettle)
	fmt.Fprintf(b, "kube-apiserver's starts until it was ready (one that exited first, a post-start hook failing on etcd reads that timed out, is started again, up to %d): apiserver-lite %d, direct %d.\n",
		maxCloudStarts, r.cloudRestart.cloudStarts, r.directRestart.cloudStarts)
	fmt.Fprintf(b, "kube-apiserver's cores in each %s from the cloud's readiness, the peak's samples: apiserver-lite %s; direct %s.\n",
		cpu.SampleEvery, coresSeries(r.cloudRestart.cpuSeries), coresSeries(r.directRestart.cpuSeries))
	for _, x := range []struct {
		side string
		res  restartResult
	}{{"apiserver-lite on every node", r.cloudRestart}, {"kubelet read set direct", r.directRestart}} {
		fmt.Fprintf(b, "\nkube-apiserver CPU profile over the cloud restart, %s (profiles of %s from its readiness until its watches were back, the last up to %s beyond), `go tool pprof -top -cum`, %d heaviest:\n\n```\n%s```\n",
			x.side, profile.RestartChunk, profile.RestartChunk, profile.CumN, x.res.profileCum)
	}
	ph, ms := r.reboot.phases, time.Millisecond
	fmt.Fprintf(b, "\nThe restart of every apiserver-lite, after the first SIGTERM: every daemon had exited at %s (the slowest %s after its SIGTERM) "+
		"and been started again at %s; the change, each node's part sent as its daemon exited, was made (its last create answered) at %s and served by every node at %s.\n\n",
		ph.exited.Round(ms), ph.slowestExit.Round(ms), ph.started.Round(ms), r.reboot.changed.Round(ms), r.reboot.caughtUp.Round(ms))
}

// writeVerdicts writes, for each goal of the issue, whether this run met
// it.
func (r *fleetResults) writeVerdicts(b *bytes.Buffer) {
	b.WriteString("| goal | verdict |\n| --- | --- |\n")
	l, d := r.cpuSpread(bench.LiteSide), r.cpuSpread(bench.KubeSide)
	// A window's edges can cut one renewal per node either way.
	edge := float64(r.cfg.Nodes) / r.cfg.Window.Minutes()
	fmt.Fprintf(b, "| steady state: apiserver-lite ≤ direct in cloud requests per minute (round 1, give or take one Lease renewal per node at the window's edges) | %s (%.1f against %.1f) |\n",
		bench.Verdict(r.lite.allPerMin() <= r.direct.allPerMin()+edge+rateTolerance), r.lite.allPerMin(), r.direct.allPerMin())
	fmt.Fprintf(b, "| steady state: apiserver-lite ≤ direct in kube-apiserver CPU (median of %d rounds) | %s (%.2f against %.2f) |\n",
		len(r.rounds), bench.Verdict(l.median > 0 && l.median <= d.median), l.median, d.median)
	rb := r.reboot
	rl := r.rebootLists
	fmt.Fprintf(b, "| restart of every apiserver-lite: %d LISTs or streaming watches of what it held, at most %d `limit=1` check per node | %s (%d relists, %d single-object of held objects, %d streaming watches of held objects, at most %d checks answered (%d more refused with 429 and retried); all told %d single-object LISTs and %d streaming watches, the new pods' objects included, and %d checks) |\n",
		goalRebootLists, maxChecksPerNode, bench.Verdict(rl.collection+rl.single+rl.streams <= goalRebootLists && rl.maxChecks <= maxChecksPerNode),
		rl.collection, rl.single, rl.streams, rl.maxChecks, rl.checksThrottled, rb.lists.single, rb.lists.streams, rb.lists.checks)
	fmt.Fprintf(b, "| restart of every apiserver-lite: every node serves a change made during the restart within %s of the starts (the first SIGTERM) | %s (%s; the new pods' objects took %d single-object reads, %d of them answered 403 and %d answered 429) |\n", goalRebootCatchUp,
		bench.Verdict(rebootCatchUpMet(rb)), rb.caughtUp.Round(time.Millisecond), rl.newLists, rl.newForbidden, rl.newThrottled)
	fmt.Fprintf(b, "| (not a goal, for reading) restart of every apiserver-lite: every node served the change after the cloud had made it (its last create answered %s after the first SIGTERM) | %s |\n",
		rb.changed.Round(time.Millisecond), rb.sinceChange().Round(time.Millisecond))
	cl, cd := r.cloudRestart, r.directRestart
	fmt.Fprintf(b, "| cloud restart: apiserver-lite ≤ direct in requests | %s (%d against %d) |\n", bench.Verdict(cl.requests <= cd.requests), cl.requests, cd.requests)
	fmt.Fprintf(b, "| cloud restart: apiserver-lite ≤ direct in bytes | %s (%.1f against %.1f MiB) |\n",
		bench.Verdict(cl.bytes.total() <= cd.bytes.total()), cl.bytes.total()/bench.MiB, cd.bytes.total()/bench.MiB)
	fmt.Fprintf(b, "| cloud restart: apiserver-lite ≤ direct in kube-apiserver CPU peak | %s (%.2f against %.2f cores) |\n",
		bench.Verdict(cl.cpuPeak <= cd.cpuPeak), cl.cpuPeak, cd.cpuPeak)
	fmt.Fprintf(b, "| cloud restart: every node caught up within %s | %s (%s) |\n", goalCatchUp,
		bench.Verdict(cl.caughtUp > 0 && cl.caughtUp <= goalCatchUp), cl.caughtUp.Round(time.Millisecond))
	failed := r.leaseFails[bench.LiteSide].In(lease.DaemonRestart)
	fmt.Fprintf(b, "| restart of every apiserver-lite: no failed Lease renewal | %s (%d failed) |\n\n", bench.Verdict(failed == 0), failed)
}

// writeProfiles writes each side's kube-apiserver CPU profile summary.
func (r *fleetResults) writeProfiles(b *bytes.Buffer) {
	for _, side := range []int{bench.LiteSide, bench.KubeSide} {
		fmt.Fprintf(b, "kube-apiserver CPU profile, %s side, every round's window merged (`go tool pprof -top`, %d heaviest by flat time):\n\n```\n%s```\n\n",
			sideLabel(side), profile.TopN, r.profileTop[side])
	}
}

// checkRounds returns what makes the rounds' and restarts' figures
// unsound: a round or a side's profile missing, a cloud restart of the
// direct side that did not catch up or cost nothing.
func (r *fleetResults) checkRounds() []error {
	var errs []error
	if len(r.rounds) != r.cfg.Rounds {
		errs = append(errs, fmt.Errorf("figure missing: %d rounds measured, want %d", len(r.rounds), r.cfg.Rounds))
	}
	for i, rd := range r.rounds {
		if rd.lite.apiCPU <= 0 || rd.direct.apiCPU <= 0 {
			errs = append(errs, fmt.Errorf("figure missing: round %d's CPU %v (apiserver-lite), %v (direct)", i+1, rd.lite.apiCPU, rd.direct.apiCPU))
		}
	}
	for _, side := range []int{bench.LiteSide, bench.KubeSide} {
		if r.profileTop[side] == "" {
			errs = append(errs, fmt.Errorf("%s: figure missing: no kube-apiserver CPU profile", sideLabel(side)))
		}
	}
	for _, x := range []struct {
		name string
		res  restartResult
	}{{"apiserver-lite", r.cloudRestart}, {"direct", r.directRestart}} {
		if x.res.caughtUp <= 0 || x.res.requests <= 0 || x.res.bytes.total() <= 0 || x.res.cpuPeak <= 0 {
			errs = append(errs, fmt.Errorf("%s: figure missing in the cloud restart: caught up after %v, %d requests, %.0f bytes, CPU peak %.2f",
				x.name, x.res.caughtUp, x.res.requests, x.res.bytes.total(), x.res.cpuPeak))
		}
		if x.res.profileCum == "" {
			errs = append(errs, fmt.Errorf("%s: figure missing: no CPU profile of the cloud restart", x.name))
		}
	}
	return errs
}

// coresSeries is a CPU series as a space-separated list, two decimals.
func coresSeries(series []float64) string {
	parts := make([]string, len(series))
	for i, c := range series {
		parts[i] = strconv.FormatFloat(c, 'f', 2, 64)
	}
	return strings.Join(parts, " ")
}
