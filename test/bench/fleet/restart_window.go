//go:build e2e

package fleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

const (
	// restartProfileChunk is each kube-apiserver CPU profile taken over a
	// fleet-wide daemon restart: short, so that the last one ends soon
	// after every node serves the change.
	restartProfileChunk = 5 * time.Second
	// restartProfileCum is how many functions the restart's cumulative
	// profile summary lists.
	restartProfileCum = 25
)

// rebootWindow is where a fleet-wide daemon restart's time went, from the
// first SIGTERM until every node served the change made as the SIGTERMs
// went out.
type rebootWindow struct {
	// marks are the machine's CPU at the first SIGTERM, when the change
	// was made (its last create answered) and when every node served it.
	marks  []cpuMark
	change changeSummary
	// createLevels name the priority levels that handled the change.
	createLevels []string
	// flow are the priority levels' counters that moved over the window.
	flow flowLevels
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
	daemons *daemonCPU
	flow0   flowLevels
	cs      kubernetes.Interface
	start   time.Time
	timings []createTiming
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
	x := &rebootWatch{f: f, cs: cs, timings: make([]createTiming, len(f.nodes)), stop: make(chan struct{}), profiled: make(chan profiled, 1)}
	if x.flow0, err = readFlowLevels(ctx, f.c); err != nil {
		return nil, err
	}
	x.daemons, err = newDaemonCPU(f.daemonPids)
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
		paths, err := profileUntil(ctx, x.f, x.stop, "daemon-restart")
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
	x.w.change = summarizeChange(x.start, x.timings)
	return x.w.change.lastAnswered, x.w.change.check()
}

// end marks every node serving the change, stops the profiles and reads
// the priority levels' counters.
func (x *rebootWatch) end(ctx context.Context) {
	x.mark()
	close(x.stop)
	flow1, err := readFlowLevels(ctx, x.f.c)
	x.note(err)
	x.w.flow = flow1.minus(x.flow0)
}

// summarize waits for the last profile and summarises the window: the
// priority levels' names and the profiles. Call it after end.
func (x *rebootWatch) summarize(ctx context.Context) rebootWindow {
	p := <-x.profiled
	x.note(p.err)
	paths := p.paths
	var err error
	x.w.createLevels, err = x.f.levelNames(ctx, x.w.change.levelUIDs)
	x.note(err)
	x.w.profileTop, err = profileTop(ctx, paths)
	x.note(err)
	x.w.profileCum, err = profileCumTop(ctx, paths)
	x.note(err)
	return x.w
}

// mark reads the machine's CPU now.
func (x *rebootWatch) mark() {
	m := cpuMark{at: time.Now()}
	api, etcd := x.f.c.CloudProcesses()
	var errs [6]error
	m.daemons, errs[0] = x.daemons.used()
	m.api, errs[1] = bench.ReadCPU(api.Pid())
	m.etcd, errs[2] = bench.ReadCPU(etcd.Pid())
	m.bench, errs[3] = bench.ReadCPU(os.Getpid())
	m.busy, m.all, errs[4] = readMachineCPU()
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

// profileUntil profiles kube-apiserver's CPU in restartProfileChunk
// chunks until stop is closed, each saved as label-<i>.
func profileUntil(ctx context.Context, f *fleet, stop <-chan struct{}, label string) ([]string, error) {
	var paths []string
	for i := 0; ; i++ {
		select {
		case <-stop:
			return paths, nil
		default:
		}
		p, err := profileCloud(ctx, f.c, restartProfileChunk, f.profiles, label+"-"+strconv.Itoa(i))
		paths = append(paths, p...)
		if err != nil {
			return paths, err
		}
	}
}

// profileCumTop is `go tool pprof -top -cum` of the profiles merged, its
// restartProfileCum heaviest functions by cumulative CPU.
func profileCumTop(ctx context.Context, paths []string) (string, error) {
	if len(paths) == 0 {
		return "", fmt.Errorf("no profile to summarise")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command for the profile summary: %w", err)
	}
	args := append([]string{"tool", "pprof", "-top", "-cum", "-nodecount=" + strconv.Itoa(restartProfileCum)}, paths...)
	out, err := exec.CommandContext(ctx, goBin, args...).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof -top -cum: %w", err)
	}
	return string(out), nil
}

// check is what makes the window's figures unsound.
func (w rebootWindow) check() []error {
	errs := append([]error(nil), w.errs...)
	if len(w.marks) != 3 {
		errs = append(errs, fmt.Errorf("figure missing: %d CPU marks of the daemon restart, want 3", len(w.marks)))
	}
	if err := w.change.check(); err != nil {
		errs = append(errs, fmt.Errorf("daemon restart: %w", err))
	}
	if w.profileTop == "" || w.profileCum == "" {
		errs = append(errs, fmt.Errorf("figure missing: no kube-apiserver CPU profile of the daemon restart"))
	}
	return errs
}
