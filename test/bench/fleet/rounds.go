//go:build e2e

package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/direct"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/profile"
)

// envFleetProfiles names a directory to keep kube-apiserver's CPU profiles
// in; unset, they go to the test's temporary directory.
const envFleetProfiles = "BENCH_FLEET_PROFILES"

// errNoSide is returned when a step needs a side that is not running.
var errNoSide = errors.New("the side is not running")

// fleetRound is one round's steady state of each side.
type fleetRound struct {
	lite, direct sideCost
}

// fleetStep is one step of a fleet run.
type fleetStep struct {
	name string
	run  func() error
}

// steps are a run's steps: the data set; the first round of both sides,
// each followed by a cloud restart (the apiserver-lite side also by a
// restart of every node); then the other rounds, apiserver-lite's and the
// direct side's in turn.
func (f *fleet) steps(ctx context.Context, r *fleetResults) []fleetStep {
	var lite, direct context.CancelFunc
	steps := []fleetStep{
		{"data set", func() error { return f.load(ctx, r) }},
		{"apiserver-lite steady state, round 1", func() (err error) { lite, err = f.liteRound(ctx, r); return err }},
		{"cloud restart, apiserver-lite", func() (err error) { r.cloudRestart, err = f.restartCloud(ctx, r, "c", f.liteCaughtUp); return err }},
		{"reboot of every node", func() error { return f.reboot(ctx, r) }},
		{"direct steady state, round 1", func() (err error) { direct, err = f.directRound(ctx, r, lite); return err }},
		{"cloud restart, direct", func() (err error) { r.directRestart, err = f.restartCloud(ctx, r, "e", f.directCaughtUp); return err }},
	}
	for i := 2; i <= f.cfg.Rounds; i++ {
		steps = append(steps,
			fleetStep{fmt.Sprintf("apiserver-lite steady state, round %d", i), func() (err error) { lite, err = f.liteRound(ctx, r, direct); return err }},
			fleetStep{fmt.Sprintf("direct steady state, round %d", i), func() (err error) { direct, err = f.directRound(ctx, r, lite); return err }})
	}
	return append(steps, fleetStep{"profile summaries", func() error {
		if direct != nil {
			direct()
		}
		return f.summarize(ctx, r)
	}})
}

// liteRound ends the direct side (stop), starts every node's
// apiserver-lite, renews the Leases through it, and measures the steady
// state. The apiserver-lites and their Lease renewals keep running until
// the returned function is called.
func (f *fleet) liteRound(ctx context.Context, r *fleetResults, stop ...context.CancelFunc) (context.CancelFunc, error) {
	for _, s := range stop {
		s()
	}
	f.direct = nil
	base, err := readBaseline(ctx, f.c)
	if err != nil {
		return nil, err
	}
	r.enterPhase(lease.RoundStart)
	defer r.enterPhase(lease.Steady)
	opened := time.Now()
	// The nodes start as the direct side's do, fleetWorkers at a time,
	// each once the one before it serves and holds its cloud watches
	// open (watchesOpened): the steady state then counts what the nodes
	// cost, not the seconds a cloud swamped by every start at once took
	// to open each node's watches (watchPhases).
	pods := f.cfg.Pods + len(f.added)
	err = f.eachNode(func(i int) error {
		if err := f.nodes[i].Process().Start(); err != nil {
			return err
		}
		if err := f.caughtUp(ctx, i, pods, ""); err != nil {
			return err
		}
		return f.watchesOpened(ctx, i, pods)
	})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	stopLite := func() {
		cancel()
		for _, n := range f.nodes {
			n.Kill()
		}
	}
	if err := f.renewLeases(sctx, &r.leaseFails[bench.LiteSide]); err != nil {
		stopLite()
		return nil, err
	}
	time.Sleep(f.cfg.Settle)
	r.enterPhase(lease.Steady)
	if _, err = f.measure(ctx, r, bench.LiteSide, base, opened); err != nil {
		stopLite()
		return nil, err
	}
	return stopLite, nil
}

// directRound stops the apiserver-lites (stop) and opens every node's
// kubelet read set directly against the cloud, each in a process of its
// own, with the same Lease renewals, and measures the steady state. They
// keep running until the returned function is called.
func (f *fleet) directRound(ctx context.Context, r *fleetResults, stop context.CancelFunc) (context.CancelFunc, error) {
	if stop == nil {
		return nil, errNoSide
	}
	stop()
	base, err := readBaseline(ctx, f.c)
	if err != nil {
		return nil, err
	}
	r.enterPhase(lease.RoundStart)
	defer r.enterPhase(lease.Steady)
	opened := time.Now()
	f.direct = make([]*direct.Proc, len(f.nodes))
	err = f.eachNode(func(i int) (err error) {
		f.direct[i], err = direct.Start(f.nodes[i].CloudConfig, f.directNode(i), f.c.Dir, &r.leaseFails[bench.KubeSide])
		return err
	})
	for _, p := range f.direct {
		if err == nil {
			err = p.Renew()
		}
	}
	if err == nil {
		time.Sleep(f.cfg.Settle)
		r.enterPhase(lease.Steady)
		_, err = f.measure(ctx, r, bench.KubeSide, base, opened)
	}
	if err != nil {
		f.stopDirect()
		return nil, err
	}
	return f.stopDirect, nil
}

// stopDirect ends every direct node's process.
func (f *fleet) stopDirect() {
	var wg sync.WaitGroup
	for _, p := range f.direct {
		if p != nil {
			wg.Go(p.Stop)
		}
	}
	wg.Wait()
}

// measure counts one side's steady state, profiling kube-apiserver over
// the window, and records it in the round it belongs to; the side's
// watches open at the window were received from opened on.
func (f *fleet) measure(ctx context.Context, r *fleetResults, side int, base baseline, opened time.Time) (sideCost, error) {
	round := len(r.rounds)
	if side == bench.LiteSide {
		r.rounds = append(r.rounds, fleetRound{})
	} else {
		round--
	}
	label := fmt.Sprintf("%s-%d", sideLabel(side), round+1)
	clients0, start := f.clientsCPU(side), time.Now()
	phases := watchPhases(f.c, opened, start)
	cost, paths, err := profiledSide(ctx, f.c, f.cfg, base, f.profiles, label)
	if err != nil {
		return cost, err
	}
	cost.phases = phases
	cost.clientCPU = time.Duration(float64(f.clientsCPU(side)-clients0) / time.Since(start).Minutes())
	f.profiled[side] = append(f.profiled[side], paths...)
	if side == bench.LiteSide {
		r.rounds[round].lite = cost
		if round == 0 {
			r.lite = cost
		}
	} else {
		r.rounds[round].direct = cost
		if round == 0 {
			r.direct = cost
		}
	}
	return cost, nil
}

// clientsCPU is the CPU time the side's clients have used on this
// machine: every apiserver-lite, or every direct node's process. A
// process that is gone counts nothing.
func (f *fleet) clientsCPU(side int) time.Duration {
	var pids []int
	if side == bench.LiteSide {
		for _, n := range f.nodes {
			pids = append(pids, n.Process().Pid())
		}
	} else {
		for _, p := range f.direct {
			pids = append(pids, p.Pid())
		}
	}
	var sum time.Duration
	for _, pid := range pids {
		if d, err := bench.ReadCPU(pid); err == nil {
			sum += d
		}
	}
	return sum
}

// summarize writes each side's profile summary into r.
func (f *fleet) summarize(ctx context.Context, r *fleetResults) error {
	for _, side := range []int{bench.LiteSide, bench.KubeSide} {
		top, err := profile.Top(ctx, f.profiled[side])
		if err != nil {
			return fmt.Errorf("%s: %w", sideLabel(side), err)
		}
		r.profileTop[side] = top
		if r.suspects[side], err = profile.ReadSuspects(ctx, f.profiled[side]); err != nil {
			return fmt.Errorf("%s: %w", sideLabel(side), err)
		}
	}
	return nil
}

func sideLabel(side int) string {
	if side == bench.LiteSide {
		return "apiserver-lite"
	}
	return "direct"
}

// profileDir is where kube-apiserver's CPU profiles are kept.
func profileDir(t *testing.T) string {
	if d := os.Getenv(envFleetProfiles); d != "" {
		return d
	}
	return t.TempDir()
}

// spread is the median, least and most of xs.
type spread struct{ median, least, most float64 }

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{median: m, least: s[0], most: s[len(s)-1]}
}

// cpuSpread is the spread of a side's kube-apiserver CPU seconds per
// minute over the rounds.
func (r *fleetResults) cpuSpread(side int) spread {
	var xs []float64
	for _, rd := range r.rounds {
		c := rd.lite
		if side == bench.KubeSide {
			c = rd.direct
		}
		if c.apiCPU > 0 {
			xs = append(xs, c.apiCPU.Seconds())
		}
	}
	return spreadOf(xs)
}
