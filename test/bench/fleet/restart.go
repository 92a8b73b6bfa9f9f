//go:build e2e

package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// catchUpFunc waits until node i serves the pod name and its secret.
type catchUpFunc func(ctx context.Context, i int, name string) error

// liteCaughtUp is catchUpFunc through each node's apiserver-lite.
func (f *fleet) liteCaughtUp(ctx context.Context, i int, name string) error {
	return f.caughtUp(ctx, i, f.cfg.Pods+len(f.added), name)
}

// directCaughtUp is catchUpFunc through each node's kubelet read set: its
// pod informer holds the pod, and the pod's secret and configmap have
// synced.
func (f *fleet) directCaughtUp(ctx context.Context, i int, name string) error {
	ctx, cancel := context.WithTimeout(ctx, fleetCatchUp)
	defer cancel()
	return f.direct[i].addPod(ctx, name)
}

// restartCloud restarts kube-apiserver with every node connected, then
// changes every node's pods and times until all serve the change through
// caughtUp; the time counts from the cloud's readiness. Failed Lease
// renewals meanwhile count in phaseCloudRestart.
func (f *fleet) restartCloud(ctx context.Context, r *fleetResults, suffix string, caughtUp catchUpFunc) (restartResult, error) {
	before, err := bench.OpenWatches(ctx, f.c)
	if err != nil {
		return restartResult{}, err
	}
	r.enterPhase(phaseCloudRestart)
	defer r.enterPhase(phaseSteady)
	start := time.Now()
	f.c.StopCloud()
	f.c.StartCloud()
	cpu := sampleCloudCPU(f.c)
	stop, prof := make(chan struct{}), make(chan profiled, 1)
	go func() {
		paths, err := profileUntil(ctx, f, stop, "cloud-restart-"+suffix)
		prof <- profiled{paths, err}
	}()
	res, err := f.changeAndCatchUp(ctx, start, time.Now(), suffix, caughtUp, before)
	res.cpuPeak, res.cpuSeries = cpu.stop(), cpu.seconds()
	close(stop)
	p := <-prof
	res.profileCum, p.err = profileCumTop(ctx, p.paths)
	err = errors.Join(err, p.err)
	// The restarted kube-apiserver's counters started at zero.
	res.bytes, err = f.restartBytes(ctx, cloudBytes{}, err)
	return res, err
}

// reboot restarts every node's apiserver-lite at once, each as systemctl
// restart does: SIGTERM, then a start on the sockets held for its doors.
// Each node's part of the change is sent the moment its daemon has exited
// (its old daemon cannot have held it; the new one must fetch it), beside
// the start, its creates timed so that a slow create shows as such; the
// catch-up still counts from the first SIGTERM. Failed Lease renewals
// meanwhile count in phaseDaemonRestart.
func (f *fleet) reboot(ctx context.Context, r *fleetResults) error {
	base, err := readCloudBytes(ctx, f.c)
	if err != nil {
		return err
	}
	watch, err := f.watchReboot(ctx)
	if err != nil {
		return err
	}
	r.enterPhase(phaseDaemonRestart)
	defer r.enterPhase(phaseSteady)
	cpu := sampleCloudCPU(f.c)
	start := time.Now()
	watch.begin(ctx, start)
	phases, err := f.restartAll(start, func(i int) { watch.send(ctx, i, "d") })
	changed, cerr := watch.changeMade()
	if err = errors.Join(err, cerr); err != nil {
		cpu.stop()
		watch.end(ctx)
		r.rebootWindow = watch.summarize(ctx)
		return err
	}
	took, err := f.caughtUpAll(ctx, start, "d", f.liteCaughtUp)
	watch.end(ctx)
	r.reboot = f.settled(start)
	r.reboot.caughtUp, r.reboot.changed, r.reboot.phases = took, changed, phases
	r.reboot.cpuPeak = cpu.stop()
	r.rebootWindow = watch.summarize(ctx)
	r.rebootLists = countRebootLists(f.c, start, "d")
	r.reboot.bytes, err = f.restartBytes(ctx, base, err)
	return err
}

// restartBytes is the cloud's bytes since base, unless err is set.
func (f *fleet) restartBytes(ctx context.Context, base cloudBytes, err error) (cloudBytes, error) {
	if err != nil {
		return cloudBytes{}, err
	}
	b, err := readCloudBytes(ctx, f.c)
	return b.minus(base), err
}

// changeAndCatchUp adds a pod named <node>-<suffix> to every node, all
// nodes' at once as a cluster's many controllers would, and waits until
// each serves it and its secret through caughtUp, then until the cloud's
// open watches are back to watchesBackShare of before; the times count
// from from, the requests from start. (Made fleetWorkers nodes at a time,
// the change's creation took most of a restart's catch-up at N=25: each
// create waits on a cloud busy with the restart.)
func (f *fleet) changeAndCatchUp(ctx context.Context, start, from time.Time, suffix string, caughtUp catchUpFunc, before int) (restartResult, error) {
	err := f.allNodes(func(i int) error {
		return createPod(ctx, f.admin, nodeName(i), nodeName(i)+"-"+suffix)
	})
	if err != nil {
		return restartResult{}, err
	}
	changed := time.Since(from)
	took, err := f.caughtUpAll(ctx, from, suffix, caughtUp)
	back, werr := f.watchesBack(ctx, from, before)
	res := f.settled(start)
	res.caughtUp, res.changed, res.watchesBack = took, changed, back
	return res, errors.Join(err, werr)
}

// watchesBack waits until the cloud's open watches are back to
// watchesBackShare of before, and returns how long after from; 0 if they
// were not within watchesBackWithin. A side's restart is counted until
// then: a side that catches up first and reopens the rest of its watches
// later (a reflector backs off up to 30 s) would otherwise be counted
// over less of its restart than the other.
func (f *fleet) watchesBack(ctx context.Context, from time.Time, before int) (time.Duration, error) {
	for deadline := time.Now().Add(watchesBackWithin); time.Now().Before(deadline); {
		n, err := bench.OpenWatches(ctx, f.c)
		if err != nil {
			return 0, err
		}
		if float64(n) >= watchesBackShare*float64(before) {
			return time.Since(from), nil
		}
		time.Sleep(watchesPollEvery)
	}
	return 0, nil
}

// caughtUpAll waits until every node serves the pod <node>-<suffix> and
// its secret through caughtUp, and returns how long after from.
func (f *fleet) caughtUpAll(ctx context.Context, from time.Time, suffix string, caughtUp catchUpFunc) (time.Duration, error) {
	f.added = append(f.added, suffix)
	err := f.eachNode(func(i int) error { return caughtUp(ctx, i, nodeName(i)+"-"+suffix) })
	return time.Since(from), err
}

// settled waits restartSettle, then counts the fleet's LISTs and requests
// since start.
func (f *fleet) settled(start time.Time) restartResult {
	time.Sleep(restartSettle)
	return restartResult{lists: listsSince(f.c, start),
		requests: len(f.c.CloudRequests(isFleetUser, start, time.Now().Add(time.Hour)))}
}

// errNoSide is returned when a step needs a side that is not running.
var errNoSide = errors.New("the side is not running")

// rebootPhases are when a fleet-wide restart's steps ended, counted from
// the first SIGTERM.
type rebootPhases struct {
	exited  time.Duration // the last daemon exited
	started time.Duration // the last daemon was started again
	// slowestExit is the longest one daemon took from its SIGTERM to its
	// exit.
	slowestExit time.Duration
}

// restartAll restarts every node's apiserver-lite at once, as a fleet's
// nodes do on their own machines: each gets SIGTERM at the same time and
// is started again as soon as it has exited, exited(i) called just before
// the start. (Restarting them a few at a time would add every batch's
// shutdown to the last node's catch-up.)
func (f *fleet) restartAll(start time.Time, exited func(i int)) (rebootPhases, error) {
	var mu sync.Mutex
	var p rebootPhases
	err := f.allNodes(func(i int) error {
		sent := time.Now()
		if err := f.nodes[i].Term(); err != nil {
			return err
		}
		gone := time.Now()
		exited(i)
		f.nodes[i].Start()
		started := time.Now()
		mu.Lock()
		defer mu.Unlock()
		p.exited = max(p.exited, gone.Sub(start))
		p.started = max(p.started, started.Sub(start))
		p.slowestExit = max(p.slowestExit, gone.Sub(sent))
		return nil
	})
	return p, err
}

// allNodes runs fn for every node at once and joins the failures.
func (f *fleet) allNodes(fn func(i int) error) error {
	errs := make([]error, len(f.nodes))
	var wg sync.WaitGroup
	for i := range f.nodes {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
