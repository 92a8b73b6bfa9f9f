//go:build e2e

package fleet

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/profile"
	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// fleetUserPrefix names the fleet nodes' identities in the cloud.
const fleetUserPrefix = "system:node:fleet-"

// isFleetUser reports whether an audited user is a fleet node.
func isFleetUser(user string) bool { return strings.HasPrefix(user, fleetUserPrefix) }

// sideCost is what one side's steady state costs the cloud.
type sideCost struct {
	// perMin is the fleet's requests per minute by "verb resource".
	perMin map[string]float64
	// watches is the cloud's open watches above the baseline without
	// nodes.
	watches int
	// apiCPU is kube-apiserver's CPU time per minute of the window,
	// apiSysCPU the part of it in the kernel, and apiWrites its write
	// system calls per minute.
	apiCPU, apiSysCPU time.Duration
	apiWrites         float64
	apiRSS, etcRSS    int64
	// clientCPU is the CPU time per minute the side's clients (every
	// apiserver-lite, or every direct node's process) used on this
	// machine, beside kube-apiserver's.
	clientCPU time.Duration
	// conns are the established connections to the cloud above the
	// baseline, at the end of the window.
	conns int
	// bytesPerMin is what kube-apiserver sent per minute of the window
	// (see cloudBytes).
	bytesPerMin float64
	// phases is the median node's count of distinct seconds in which its
	// watches open at the window opened (see watchPhases).
	phases float64
}

// nonWatchPerMin is the fleet's requests per minute other than watches.
func (s sideCost) nonWatchPerMin() float64 {
	var n float64
	for k, v := range s.perMin {
		if !strings.HasPrefix(k, "watch ") {
			n += v
		}
	}
	return n
}

// allPerMin is the fleet's requests per minute, watches included.
func (s sideCost) allPerMin() float64 {
	var n float64
	for _, v := range s.perMin {
		n += v
	}
	return n
}

// measureSide counts the fleet's requests in the cloud's audit log, the
// open watches and kube-apiserver's CPU over window, then reads memory.
func measureSide(ctx context.Context, c *framework.Cluster, window time.Duration, baseWatches int) (sideCost, error) {
	api, etcd := c.CloudProcesses()
	mark0, err := readAPIMark(api.Pid())
	if err != nil {
		return sideCost{}, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return sideCost{}, ctx.Err()
	case <-time.After(window): // the window's length is the measurement
	}
	end := time.Now()
	mark1, err := readAPIMark(api.Pid())
	if err != nil {
		return sideCost{}, err
	}
	perMin := map[string]float64{}
	minutes := end.Sub(start).Minutes()
	for _, e := range c.CloudRequests(isFleetUser, start, end) {
		perMin[e.Verb+" "+e.Resource()] += 1 / minutes
	}
	s := sideCost{perMin: perMin, apiCPU: time.Duration(float64(mark1.user+mark1.system-mark0.user-mark0.system) / minutes),
		apiSysCPU: time.Duration(float64(mark1.system-mark0.system) / minutes), apiWrites: float64(mark1.writes-mark0.writes) / minutes}
	w, err := bench.OpenWatches(ctx, c)
	if err != nil {
		return s, err
	}
	s.watches = w - baseWatches
	apiMem, err := bench.ReadMemory(api.Pid())
	if err != nil {
		return s, err
	}
	etcdMem, err := bench.ReadMemory(etcd.Pid())
	s.apiRSS, s.etcRSS = apiMem.RSS, etcdMem.RSS
	return s, err
}

// profiledSide measures a side's steady state while profiling
// kube-apiserver's CPU over the same window, in chunks saved to dir as
// <label>-<n>.pprof.
func profiledSide(ctx context.Context, c *framework.Cluster, cfg fleetConfig, base baseline, dir, label string) (sideCost, []string, error) {
	bytes0, err := readCloudBytes(ctx, c)
	if err != nil {
		return sideCost{}, nil, err
	}
	start := time.Now()
	done := make(chan struct{})
	var paths []string
	var perr error
	go func() {
		defer close(done)
		paths, perr = profile.Take(ctx, c.Admin, cfg.Window, dir, label)
	}()
	cost, err := measureSide(ctx, c, cfg.Window, base.watches)
	<-done
	if err != nil {
		return cost, paths, err
	}
	bytes1, err := readCloudBytes(ctx, c)
	cost.bytesPerMin = bytes1.minus(bytes0).total() / time.Since(start).Minutes()
	conns, cerr := cloudConns(c)
	cost.conns = conns - base.conns
	return cost, paths, errors.Join(err, cerr, perr)
}

// apiMark is kube-apiserver's CPU time, user and system, and its write
// system calls at one moment.
type apiMark struct {
	user, system time.Duration
	writes       int64
}

// readAPIMark reads kube-apiserver's (pid's) apiMark now.
func readAPIMark(pid int) (apiMark, error) {
	var m apiMark
	var err error
	if m.user, m.system, err = bench.ReadCPUSplit(pid); err != nil {
		return m, err
	}
	m.writes, err = bench.ReadWriteCalls(pid)
	return m, err
}

// listCounts are the fleet's LISTs, by what they read.
type listCounts struct {
	// collection LISTs read a whole collection (a relist).
	collection int
	// single LISTs read one object by name, as a per-object reflector
	// (the kubelet's, apiserver-lite's on-demand secrets) starts.
	single int
	// checks are LISTs of at most one object that read only the
	// collection's resourceVersion (apiserver-lite's regression check).
	checks int
	// streams are watches that read the state first, as a LIST does
	// (sendInitialEvents=true: client-go's WatchList reflectors, the
	// kubelet's among them, and apiserver-lite's per-object reads), of a
	// collection or one object.
	streams int
}

// total counts the reads of a state: LISTs and streaming watches.
func (l listCounts) total() int { return l.collection + l.single + l.checks + l.streams }

// listsSince counts the fleet's LISTs and streaming watches the cloud
// received since start.
func listsSince(c *framework.Cluster, start time.Time) listCounts {
	var n listCounts
	for _, e := range c.CloudRequests(isFleetUser, start, time.Now().Add(time.Hour)) {
		if e.Verb != "list" && e.Verb != "watch" {
			continue
		}
		u, err := url.Parse(e.RequestURI)
		if err != nil {
			n.collection++
			continue
		}
		q := u.Query()
		switch {
		case e.Verb == "watch":
			if isStream(q) {
				n.streams++
			}
		case q.Get("limit") == "1":
			n.checks++
		case strings.HasPrefix(q.Get("fieldSelector"), "metadata.name="):
			n.single++
		default:
			n.collection++
		}
	}
	return n
}
