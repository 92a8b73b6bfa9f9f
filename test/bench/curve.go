//go:build e2e

package bench

import (
	"bytes"
	"fmt"
	"time"
)

// coldStartGoal is issue 12's cold start goal: under a second per 10,000
// objects held.
const (
	coldStartGoal    = time.Second
	coldStartObjects = 10000
	// syncGoal is the initial-sync goal in objects applied per second.
	syncGoal = 10000
	// growthGoal bounds apiserver-lite's memory growth per byte of JSON
	// held, from the smallest to the largest step.
	growthGoal = 2.0
)

// writeEdgeOnly renders the figures only apiserver-lite has.
func (res *results) writeEdgeOnly(b *bytes.Buffer) {
	n := res.cfg.Objects()
	last := res.steps[len(res.steps)-1]
	coldGoal := time.Duration(float64(coldStartGoal) * max(1, float64(n)/coldStartObjects))
	fmt.Fprintf(b, "\napiserver-lite alone, at %d objects:\n\n| figure | value | goal | met |\n|---|---|---|---|\n", n)
	for _, cs := range []struct {
		name string
		t    coldTimes
	}{{"online (cloud reachable)", res.coldOnline}, {"offline (cloud link cut)", res.coldOffline}} {
		fmt.Fprintf(b, "| cold start %s: SIGKILL, restart on its SQLite, to the first LIST answered | %.0f ms | < %.0f ms | %s |\n",
			cs.name, ms(cs.t.serving), ms(coldGoal), yesNo(cs.t.serving < coldGoal))
		fmt.Fprintf(b, "| cold start %s, to every pod and configmap listed and decoded by a client | %.0f ms | | |\n", cs.name, ms(cs.t.full))
	}
	perCPU := last.sync.perCPUSecond()
	fmt.Fprintf(b, "| initial sync from scratch: objects applied per second of apiserver-lite CPU (its utime+stime from process start to /readyz: %.2f s) | %.0f objects/CPU-s | ≥ %d objects/s | %s |\n",
		last.sync.cpu.Seconds(), perCPU, syncGoal, yesNo(perCPU >= syncGoal))
	fmt.Fprintf(b, "| initial sync from scratch, end to end: process start to /readyz with every object served | %.2f s, %.0f objects/s | | |\n",
		last.sync.took.Seconds(), last.sync.rate())
	fmt.Fprintf(b, "| the cloud's own time to serve the same objects: one paged JSON LIST of the pods and one of the configmaps, limit=%d, in turn, read to the last byte (the bound of the end-to-end figure) | %.2f s, %.0f objects/s | | |\n",
		cloudPageSize, res.cloudList.Seconds(), float64(n)/max(res.cloudList.Seconds(), 1e-9))
	fmt.Fprintf(b, "| cloud link bytes per object in the initial sync (both ways, TLS included) | %.0f B | | |\n", last.sync.perObject())
	fmt.Fprintf(b, "| cloud link bytes per watch event at %d updates/s (both ways, TLS included) | %.0f B | | |\n", res.cfg.UpdatesPerSec, res.linkPerEvent())
	if g, ok := res.growth(); ok {
		fmt.Fprintf(b, "| VmHWM growth per byte of JSON held, %d to %d objects | %.1f× | ≤ %.0f× | %s |\n",
			res.steps[0].objects, last.objects, g, growthGoal, yesNo(g <= growthGoal))
	}
	fmt.Fprintf(b, "| SQLite data dir | %.1f MiB | | |\n", float64(last.sync.dbBytes)/MiB)
}

func (s syncResult) rate() float64 {
	if s.took <= 0 {
		return 0
	}
	return float64(s.objects) / s.took.Seconds()
}

// perCPUSecond is the objects synced per second of apiserver-lite's CPU.
func (s syncResult) perCPUSecond() float64 {
	if s.cpu <= 0 {
		return 0
	}
	return float64(s.objects) / s.cpu.Seconds()
}

func (s syncResult) perObject() float64 {
	return float64(s.linkBytes) / float64(max(s.objects, 1))
}

func (res *results) linkPerEvent() float64 {
	var xs []float64
	for _, r := range res.rounds {
		xs = append(xs, r.linkPerEvent)
	}
	return Median(xs)
}

// growth is apiserver-lite's VmHWM growth divided by the growth of the
// JSON it holds, between the first and the last step.
func (res *results) growth() (float64, bool) {
	if len(res.steps) < 2 {
		return 0, false
	}
	a, z := res.steps[0], res.steps[len(res.steps)-1]
	held := z.heldJSON - a.heldJSON
	if held <= 0 {
		return 0, false
	}
	return float64(z.lite.HWM-a.lite.HWM) / float64(held), true
}

// writeCurve renders the memory curve: one fresh sync per data set size.
func (res *results) writeCurve(b *bytes.Buffer) {
	fmt.Fprintf(b, "\nHow the cost grows: at each size a fresh apiserver-lite synced from scratch (one measurement each).\n\n")
	fmt.Fprintf(b, "| objects | JSON held | load into the cloud | sync | lite VmRSS / VmHWM | kube-apiserver VmRSS / VmHWM | etcd VmRSS | LIST JSON kube / lite | LIST protobuf kube / lite | cold start: serving / full LIST | link bytes per object | SQLite |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.steps {
		fmt.Fprintf(b, "| %d | %.0f MiB | %.1f s | %.2f s (%.0f/s; %.0f/CPU-s) | %d / %d MiB | %d / %d MiB | %d MiB | %.0f / %.0f ms | %.0f / %.0f ms | %.0f / %.0f ms | %.0f B | %.1f MiB |\n",
			s.objects, float64(s.heldJSON)/MiB, s.load.Seconds(), s.sync.took.Seconds(), s.sync.rate(), s.sync.perCPUSecond(),
			s.lite.RSS/MiB, s.lite.HWM/MiB, s.kube.RSS/MiB, s.kube.HWM/MiB, s.etcd.RSS/MiB,
			ms(s.listJSON[KubeSide]), ms(s.listJSON[LiteSide]), ms(s.listProto[KubeSide]), ms(s.listProto[LiteSide]),
			ms(s.coldStart.serving), ms(s.coldStart.full), s.sync.perObject(), float64(s.sync.dbBytes)/MiB)
	}
}
