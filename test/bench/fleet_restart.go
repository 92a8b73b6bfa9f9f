//go:build e2e

package bench

import (
	"context"
	"errors"
	"time"
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
	r.enterPhase(phaseCloudRestart)
	defer r.enterPhase(phaseSteady)
	start := time.Now()
	f.c.StopCloud()
	f.c.StartCloud()
	cpu := sampleCloudCPU(f.c)
	res, err := f.changeAndCatchUp(ctx, start, time.Now(), suffix, caughtUp)
	res.cpuPeak = cpu.stop()
	// The restarted kube-apiserver's counters started at zero.
	res.bytes, err = f.restartBytes(ctx, cloudBytes{}, err)
	return res, err
}

// reboot restarts every node's apiserver-lite at once, each as systemctl
// restart does: SIGTERM, then a start on the sockets held for its doors.
// Failed Lease renewals meanwhile count in phaseDaemonRestart.
func (f *fleet) reboot(ctx context.Context, r *fleetResults) error {
	base, err := readCloudBytes(ctx, f.c)
	if err != nil {
		return err
	}
	r.enterPhase(phaseDaemonRestart)
	defer r.enterPhase(phaseSteady)
	cpu := sampleCloudCPU(f.c)
	start := time.Now()
	if err := f.eachNode(f.restartNode); err != nil {
		cpu.stop()
		return err
	}
	r.reboot, err = f.changeAndCatchUp(ctx, start, start, "d", f.liteCaughtUp)
	r.reboot.cpuPeak = cpu.stop()
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

// changeAndCatchUp adds a pod named <node>-<suffix> to every node and
// waits until each serves it and its secret through caughtUp; the time
// counts from from, the requests from start.
func (f *fleet) changeAndCatchUp(ctx context.Context, start, from time.Time, suffix string, caughtUp catchUpFunc) (restartResult, error) {
	err := f.eachNode(func(i int) error {
		return createPod(ctx, f.admin, nodeName(i), nodeName(i)+"-"+suffix)
	})
	if err != nil {
		return restartResult{}, err
	}
	f.added = append(f.added, suffix)
	err = f.eachNode(func(i int) error { return caughtUp(ctx, i, nodeName(i)+"-"+suffix) })
	took := time.Since(from)
	time.Sleep(restartSettle)
	res := restartResult{lists: listsSince(f.c, start), caughtUp: took,
		requests: len(f.c.CloudRequests(isFleetUser, start, time.Now().Add(time.Hour)))}
	return res, err
}

// errNoSide is returned when a step needs a side that is not running.
var errNoSide = errors.New("the side is not running")
