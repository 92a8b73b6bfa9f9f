//go:build e2e

package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/cpu"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/profile"
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
	return f.direct[i].AddPod(ctx, name)
}

// maxCloudStarts bounds the starts of a cloud restart's kube-apiserver:
// under the load of a fleet's reconnecting clients on this one machine, a
// start can exit before it is ready, and a cloud's supervisor would start
// it again.
const maxCloudStarts = 3

// restartCloud restarts kube-apiserver with every node connected, then
// changes every node's pods and times until all serve the change through
// caughtUp; the time counts from the cloud's readiness. Failed Lease
// renewals meanwhile count in lease.CloudRestart.
func (f *fleet) restartCloud(ctx context.Context, r *fleetResults, suffix string, caughtUp catchUpFunc) (restartResult, error) {
	before, err := bench.OpenWatches(ctx, f.c)
	if err != nil {
		return restartResult{}, err
	}
	r.enterPhase(lease.CloudRestart)
	defer r.enterPhase(lease.Steady)
	start := time.Now()
	f.c.StopCloud()
	starts := f.c.StartCloudRetrying(maxCloudStarts)
	sampler := f.sampleCloudCPU()
	stop, prof := make(chan struct{}), make(chan profiled, 1)
	go func() {
		paths, err := profile.Until(ctx, f.c.Admin, f.profiles, stop, "cloud-restart-"+suffix)
		prof <- profiled{paths, err}
	}()
	res, err := f.changeAndCatchUp(ctx, start, time.Now(), suffix, caughtUp, before)
	res.cloudStarts = starts
	res.cpuPeak, res.cpuSeries = sampler.Stop(), sampler.Seconds()
	close(stop)
	p := <-prof
	res.profileCum, p.err = profile.CumTop(ctx, p.paths)
	err = errors.Join(err, p.err)
	// The restarted kube-apiserver's counters started at zero.
	res.bytes, err = f.restartBytes(ctx, cloudBytes{}, err)
	return res, err
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

// sampleCloudCPU starts sampling the running kube-apiserver's CPU.
func (f *fleet) sampleCloudCPU() *cpu.Sampler {
	api, _ := f.c.CloudProcesses()
	return cpu.Sample(api.Pid())
}
