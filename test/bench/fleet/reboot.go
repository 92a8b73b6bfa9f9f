//go:build e2e

package fleet

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// reboot restarts every node's apiserver-lite at once, each as systemctl
// restart does: SIGTERM, then a start on the sockets held for its doors.
// Each node's part of the change is sent the moment its daemon has exited
// (its old daemon cannot have held it; the new one must fetch it), beside
// the start, its creates timed so that a slow create shows as such; the
// catch-up still counts from the first SIGTERM. Failed Lease renewals
// meanwhile count in lease.DaemonRestart.
func (f *fleet) reboot(ctx context.Context, r *fleetResults) error {
	base, err := readCloudBytes(ctx, f.c)
	if err != nil {
		return err
	}
	watch, err := f.watchReboot(ctx)
	if err != nil {
		return err
	}
	r.enterPhase(lease.DaemonRestart)
	defer r.enterPhase(lease.Steady)
	sampler := f.sampleCloudCPU()
	start := time.Now()
	watch.begin(ctx, start)
	f.added = append(f.added, "d")
	follow := newCatchUps(ctx, start, len(f.nodes))
	phases, err := f.restartAll(start, func(i int) { watch.send(ctx, i, "d") },
		func(i int) {
			follow.start(i, func(ctx context.Context) error { return f.liteCaughtUp(ctx, i, nodeName(i)+"-d") })
		})
	changed, cerr := watch.changeMade()
	if err = errors.Join(err, cerr); err != nil {
		follow.cancel()
	}
	took, ferr := follow.wait()
	if err = errors.Join(err, ferr); err != nil {
		sampler.Stop()
		watch.end(ctx)
		r.rebootWindow = watch.summarize(ctx)
		return err
	}
	watch.end(ctx)
	r.reboot = f.settled(start)
	r.reboot.caughtUp, r.reboot.changed, r.reboot.phases = took, changed, phases
	r.reboot.cpuPeak = sampler.Stop()
	r.rebootWindow = watch.summarize(ctx)
	r.rebootLists = countRebootLists(f.c, start, "d")
	r.reboot.bytes, err = f.restartBytes(ctx, base, err)
	return err
}

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
// the start and started(i) just after. (Restarting them a few at a time
// would add every batch's shutdown to the last node's catch-up.)
func (f *fleet) restartAll(start time.Time, exited, started func(i int)) (rebootPhases, error) {
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
		at := time.Now()
		started(i)
		mu.Lock()
		defer mu.Unlock()
		p.exited = max(p.exited, gone.Sub(start))
		p.started = max(p.started, at.Sub(start))
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

// catchUps follow every node's catch-up from its daemon's start, all at
// once, each from the moment it could begin: checking the nodes a few at
// a time after the change was made would add the checks' own pace to the
// last node's time.
type catchUps struct {
	ctx    context.Context
	cancel context.CancelFunc
	from   time.Time
	wg     sync.WaitGroup
	// served and errs are each node's catch-up time, from from, and
	// failure; each is written by its node's goroutine alone.
	served []time.Duration
	errs   []error
}

func newCatchUps(ctx context.Context, from time.Time, nodes int) *catchUps {
	ctx, cancel := context.WithCancel(ctx)
	return &catchUps{ctx: ctx, cancel: cancel, from: from, served: make([]time.Duration, nodes), errs: make([]error, nodes)}
}

// start follows node i's catch-up, caughtUp returning once it served the
// change.
func (c *catchUps) start(i int, caughtUp func(ctx context.Context) error) {
	c.wg.Go(func() {
		c.errs[i] = caughtUp(c.ctx)
		c.served[i] = time.Since(c.from)
	})
}

// wait returns when the last node served the change, from from.
func (c *catchUps) wait() (time.Duration, error) {
	c.wg.Wait()
	c.cancel()
	return slices.Max(c.served), errors.Join(c.errs...)
}
