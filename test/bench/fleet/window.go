//go:build e2e

package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/apf"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/change"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/cpu"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/profile"
)

// rebootWindow is where a fleet-wide daemon restart's time went, from the
// first SIGTERM until every node served the change made as the SIGTERMs
// went out.
type rebootWindow struct {
	// marks are the machine's CPU at the first SIGTERM, when the change
	// was made (its last create answered) and when every node served it.
	marks  []cpu.Mark
	change change.Summary
	// createLevels name the priority levels that handled the change.
	createLevels []string
	// flow are the priority levels' counters that moved over the window.
	flow apf.Levels
	// profileTop and profileCum summarise kube-apiserver's CPU profiles
	// over the window.
	profileTop, profileCum string
	// errs are the figures that could not be read.
	errs []error
}

// rebootWatch follows a fleet-wide daemon restart's window while it runs.
type rebootWatch struct {
	f       *fleet
	w       rebootWindow
	daemons *cpu.Daemons
	flow0   apf.Levels
	cs      kubernetes.Interface
	start   time.Time
	timings []change.Timing
	// sent counts the nodes' parts of the change in flight.
	sent sync.WaitGroup
	stop chan struct{}
	// profiled yields the profiles once stop is closed.
	profiled chan profiled
}

// profiled are the profiles taken over a window and why they ended early.
type profiled struct {
	paths []string
	err   error
}

// watchReboot readies the window's figures before the first SIGTERM: the
// change's client, the priority levels' counters and the daemons' CPU.
func (f *fleet) watchReboot(ctx context.Context) (*rebootWatch, error) {
	cs, err := f.changeClient(ctx)
	if err != nil {
		return nil, err
	}
	x := &rebootWatch{f: f, cs: cs, timings: make([]change.Timing, len(f.nodes)), stop: make(chan struct{}), profiled: make(chan profiled, 1)}
	if x.flow0, err = apf.Read(ctx, f.c.Admin); err != nil {
		return nil, err
	}
	x.daemons, err = cpu.NewDaemons(f.daemonPids)
	return x, err
}

// daemonPids are the nodes' apiserver-lites' current PIDs.
func (f *fleet) daemonPids() []int {
	out := make([]int, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = n.Process().Pid()
	}
	return out
}

// begin marks the first SIGTERM's moment and starts profiling
// kube-apiserver.
func (x *rebootWatch) begin(ctx context.Context, start time.Time) {
	x.start = start
	x.mark()
	go func() {
		paths, err := profile.Until(ctx, x.f.c.Admin, x.f.profiles, x.stop, "daemon-restart")
		x.profiled <- profiled{paths, err}
	}()
}

// send sends node i's part of the change, the pod <node>-<suffix>, once
// its daemon has exited.
func (x *rebootWatch) send(ctx context.Context, i int, suffix string) {
	x.sent.Add(1)
	x.f.sendChange(ctx, x.cs, i, suffix, &x.timings[i], x.sent.Done)
}

// changeMade waits until every node's part of the change is answered and
// returns when the last was, from the first SIGTERM. Call it after every
// send.
func (x *rebootWatch) changeMade() (time.Duration, error) {
	x.sent.Wait()
	x.mark()
	x.w.change = change.Summarize(x.start, x.timings)
	return x.w.change.LastAnswered, x.w.change.Check()
}

// end marks every node serving the change, stops the profiles and reads
// the priority levels' counters.
func (x *rebootWatch) end(ctx context.Context) {
	x.mark()
	close(x.stop)
	flow1, err := apf.Read(ctx, x.f.c.Admin)
	x.note(err)
	x.w.flow = flow1.Minus(x.flow0)
}

// summarize waits for the last profile and summarises the window: the
// priority levels' names and the profiles. Call it after end.
func (x *rebootWatch) summarize(ctx context.Context) rebootWindow {
	p := <-x.profiled
	x.note(p.err)
	paths := p.paths
	var err error
	x.w.createLevels, err = apf.Names(ctx, x.f.admin, x.w.change.LevelUIDs)
	x.note(err)
	x.w.profileTop, err = profile.Top(ctx, paths)
	x.note(err)
	x.w.profileCum, err = profile.CumTop(ctx, paths)
	x.note(err)
	return x.w
}

// mark reads the machine's CPU now.
func (x *rebootWatch) mark() {
	m := cpu.Mark{At: time.Now()}
	api, etcd := x.f.c.CloudProcesses()
	var errs [6]error
	m.Daemons, errs[0] = x.daemons.Used()
	m.API, errs[1] = bench.ReadCPU(api.Pid())
	m.Etcd, errs[2] = bench.ReadCPU(etcd.Pid())
	m.Bench, errs[3] = bench.ReadCPU(os.Getpid())
	m.Busy, m.All, errs[4] = cpu.ReadMachine()
	if err := errors.Join(errs[:]...); err != nil {
		x.note(fmt.Errorf("CPU mark %d: %w", len(x.w.marks), err))
	}
	x.w.marks = append(x.w.marks, m)
}

func (x *rebootWatch) note(err error) {
	if err != nil {
		x.w.errs = append(x.w.errs, err)
	}
}

// check is what makes the window's figures unsound.
func (w rebootWindow) check() []error {
	errs := append([]error(nil), w.errs...)
	if len(w.marks) != 3 {
		errs = append(errs, fmt.Errorf("figure missing: %d CPU marks of the daemon restart, want 3", len(w.marks)))
	}
	if err := w.change.Check(); err != nil {
		errs = append(errs, fmt.Errorf("daemon restart: %w", err))
	}
	if w.profileTop == "" || w.profileCum == "" {
		errs = append(errs, fmt.Errorf("figure missing: no kube-apiserver CPU profile of the daemon restart"))
	}
	return errs
}

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
		change.Requests, c.FirstCalled.Round(ms), c.LastSent.Round(ms), c.FirstAnswered.Round(ms), c.LastAnswered.Round(ms),
		c.MedianLatency.Round(ms), c.MaxLatency.Round(ms), c.Slowest.Round(ms), c.Retried, c.Failed)
	fmt.Fprintf(b, "- API Priority and Fairness handled the change's creates at the priority level `%s`.\n", strings.Join(w.createLevels, "`, `"))
	fmt.Fprintf(b, "- Every node served the change %s after the first SIGTERM, %s after it was made.\n\n",
		r.reboot.caughtUp.Round(ms), r.reboot.sinceChange().Round(ms))
	cpu.WriteShares(b, w.marks)
	apf.Write(b, w.flow, w.createLevels)
	for _, e := range w.errs {
		fmt.Fprintf(b, "Not read: %v\n\n", e)
	}
	fmt.Fprintf(b, "kube-apiserver CPU profile over the same window (profiles of %s from the first SIGTERM until every node served the change, the last up to %s beyond), `go tool pprof -top`:\n\n```\n%s```\n\n",
		profile.RestartChunk, profile.RestartChunk, w.profileTop)
	fmt.Fprintf(b, "The same by cumulative time, `go tool pprof -top -cum`, %d heaviest:\n\n```\n%s```\n\n", profile.CumN, w.profileCum)
}

// changeClient is an admin client whose creates are timed at the wire,
// with its connection to the cloud already open, so that the change's
// creates do not wait on a TLS handshake.
func (f *fleet) changeClient(ctx context.Context) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(f.c.AdminConfig)
	cfg.QPS, cfg.Burst = bench.ClientQPS, bench.ClientBurst
	cfg.Wrap(change.Wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, fleetNamespace, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("open the change's connection: %w", err)
	}
	return cs, nil
}

// sendChange creates the pod <node>-<suffix> of node i, its creates
// timed, into ct; done is called once they are answered.
func (f *fleet) sendChange(ctx context.Context, cs kubernetes.Interface, i int, suffix string, ct *change.Timing, done func()) {
	ct.Called = time.Now()
	go func() {
		defer done()
		ct.Err = createPod(change.WithTiming(ctx, ct), cs, nodeName(i), nodeName(i)+"-"+suffix)
	}()
}
