//go:build e2e

package fleet

import (
	"bytes"
	"fmt"
	"strings"
	"time"
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

// writeRebootWindow writes where the fleet-wide daemon restart's time
// went: the change's creates, the machine's CPU by process, API Priority
// and Fairness and kube-apiserver's CPU profile over the window.
func (r *fleetResults) writeRebootWindow(b *bytes.Buffer) {
	w, ms := r.rebootWindow, time.Millisecond
	c := w.change
	b.WriteString("Where the restart of every apiserver-lite spent its time, from the first SIGTERM:\n\n")
	fmt.Fprintf(b, "- The change (each node's secret, configmap and pod, %d creates in order per node, through one admin connection opened beforehand): "+
		"each node's part was sent the moment its daemon had exited (its old daemon cannot have held it; the new one must fetch it), beside the daemon's start. "+
		"The first part was called at %s, the last node's first create sent at %s; the cloud answered the first node's last create at %s "+
		"and the last node's at %s (the change made). A node's creates took %s (median) to %s from the first sent to the last answered; "+
		"the slowest single create waited %s; %d nodes' creates were retried by client-go, %d failed.\n",
		changeRequests, c.firstCalled.Round(ms), c.lastSent.Round(ms), c.firstAnswered.Round(ms), c.lastAnswered.Round(ms),
		c.medianLatency.Round(ms), c.maxLatency.Round(ms), c.slowest.Round(ms), c.retried, c.failed)
	fmt.Fprintf(b, "- API Priority and Fairness handled the change's creates at the priority level `%s`.\n", strings.Join(w.createLevels, "`, `"))
	fmt.Fprintf(b, "- Every node served the change %s after the first SIGTERM, %s after it was made.\n\n",
		r.reboot.caughtUp.Round(ms), r.reboot.sinceChange().Round(ms))
	writeCPUShares(b, w.marks)
	writeFlowLevels(b, w.flow, w.createLevels)
	for _, e := range w.errs {
		fmt.Fprintf(b, "Not read: %v\n\n", e)
	}
	fmt.Fprintf(b, "kube-apiserver CPU profile over the same window (profiles of %s from the first SIGTERM until every node served the change, the last up to %s beyond), `go tool pprof -top`:\n\n```\n%s```\n\n",
		restartProfileChunk, restartProfileChunk, w.profileTop)
	fmt.Fprintf(b, "The same by cumulative time, `go tool pprof -top -cum`, %d heaviest:\n\n```\n%s```\n\n", restartProfileCum, w.profileCum)
}

// writeCPUShares writes the cores each part of the machine used between
// the window's marks.
func writeCPUShares(b *bytes.Buffer, marks []cpuMark) {
	if len(marks) != 3 {
		fmt.Fprintf(b, "CPU by process: not read (%d marks).\n\n", len(marks))
		return
	}
	cols := []cpuShares{sharesBetween(marks[0], marks[1]), sharesBetween(marks[1], marks[2]), sharesBetween(marks[0], marks[2])}
	ms := time.Millisecond
	fmt.Fprintf(b, "| cores used (CPU-seconds a second) | first SIGTERM → change made (%s) | change made → every node serving it (%s) | whole window (%s) |\n| --- | --- | --- | --- |\n",
		cols[0].elapsed.Round(ms), cols[1].elapsed.Round(ms), cols[2].elapsed.Round(ms))
	for _, row := range []struct {
		name string
		get  func(cpuShares) float64
	}{
		{"every apiserver-lite, old and new, summed", func(s cpuShares) float64 { return s.daemons }},
		{"kube-apiserver", func(s cpuShares) float64 { return s.api }},
		{"etcd", func(s cpuShares) float64 { return s.etcd }},
		{"this benchmark (its clients, the change's creates, the audit log's reading)", func(s cpuShares) float64 { return s.bench }},
		{"everything else on the machine", func(s cpuShares) float64 { return s.others }},
		{"**whole machine busy**", func(s cpuShares) float64 { return s.busy }},
		{"whole machine's capacity", func(s cpuShares) float64 { return s.cores }},
	} {
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f |\n", row.name, row.get(cols[0]), row.get(cols[1]), row.get(cols[2]))
	}
	b.WriteString("\n")
}
