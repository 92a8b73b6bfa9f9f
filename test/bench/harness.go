//go:build e2e

package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Sides of a pair of figures: kube-apiserver (the cloud, read directly)
// and apiserver-lite.
const (
	KubeSide = 0
	LiteSide = 1
)

// stepResult is the memory curve at one data set size.
type stepResult struct {
	objects    int
	load       time.Duration // creating this step's new objects in the cloud
	sync       syncResult
	lite, kube Memory
	etcd       Memory
	// heldJSON is the JSON size of the pods and configmaps held.
	heldJSON  int64
	listJSON  [2]time.Duration
	listProto [2]time.Duration
	coldStart coldTimes // online, from the data synced at this step
}

// roundResult is one alternating round at the full data set.
type roundResult struct {
	list          [2]listResult
	informer      [2]time.Duration
	informerItems [2]int
	// informerFloor is the same informer's start against that server's
	// captured WatchList replayed from memory: the client's own part.
	informerFloor [2]time.Duration
	watch         [2]watchResult
	// linkPerEvent is what the cloud link carried per update while
	// apiserver-lite's watchers ran, both ways.
	linkPerEvent float64
}

// results is everything one harness run measured.
type results struct {
	cfg     Config
	machine Machine
	steps   []stepResult
	rounds  []roundResult
	// peak is each server's memory after the rounds: VmHWM covers the
	// whole run since the last sync from scratch.
	peakLite, peakKube, peakEtcd Memory
	coldOnline, coldOffline      coldTimes
	profiles                     string       // where profiles went, or why none
	pprof                        bool         // apiserver-lite serves /debug/pprof
	relist                       relistResult // see relist.go
	prof                         *profiler
	// cloudList is the cloud's time to serve the full data set as the
	// initial sync lists it.
	cloudList time.Duration
	// captures are each server's WatchList response, replayed for the
	// informer's client floor.
	captures [2]*watchCapture
	// lists are each server's pod LIST bodies, replayed for the typed
	// LISTs' client floors.
	lists [2]listFloors
	// reached lists the phases the run completed; stopped is why it
	// stopped early, nil when it ran to the end.
	reached []string
	stopped error
}

// run starts the cloud and apiserver-lite, grows the data set step by
// step, then measures both servers alternately at the full data set. A
// run that stops early returns what it measured, with the reason in
// stopped.
func run(t testing.TB, cfg Config) *results {
	res := &results{cfg: cfg, machine: ReadMachine(), prof: &profiler{dir: cfg.ProfileDir}}
	if err := res.runPhases(t); err != nil {
		res.stopped = err
	}
	res.machine.LoadEnd = LoadAverage()
	return res
}

func (res *results) reach(format string, args ...any) {
	res.reached = append(res.reached, fmt.Sprintf(format, args...))
}

// runPhases runs the phases of run in order.
func (res *results) runPhases(t testing.TB) error {
	ctx, cfg := t.Context(), res.cfg
	c := framework.New(t, framework.Options{Namespaces: []string{benchNamespace}, EdgeLink: true})
	// Start the edge on the empty cloud once; later starts time themselves.
	c.StartEdge()
	kubeProc, etcdProc := c.CloudProcesses()
	kube, err := newServer("kube-apiserver", c.AdminConfig, kubeProc)
	if err != nil {
		return err
	}
	lite, err := newServer("apiserver-lite", c.EdgeConfig(), c.EdgeProcess())
	if err != nil {
		return err
	}
	sides := [2]*server{KubeSide: kube, LiteSide: lite}
	ds := &dataset{cloud: kube.json, node: c.NodeName}
	for _, n := range cfg.steps() {
		step, err := measureStep(ctx, c, ds, sides, etcdProc, cfg, n)
		if err != nil {
			return fmt.Errorf("step of %d objects: %w", n, err)
		}
		t.Logf("step %d objects: load %v, sync %v, apiserver-lite VmHWM %d MiB", n, step.load, step.sync.took, step.lite.HWM/MiB)
		res.steps = append(res.steps, step)
		res.reach("step of %d objects", n)
	}
	if err := res.prepareRounds(ctx, c, sides); err != nil {
		return err
	}
	for i := range cfg.Rounds {
		r, err := measureRound(ctx, c, sides, cfg, i, res)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		res.rounds = append(res.rounds, r)
		res.reach("round %d", i+1)
		t.Logf("round %d done", i+1)
	}
	if res.peakLite, res.peakKube, res.peakEtcd, err = readMemories(lite, kube, etcdProc); err != nil {
		return err
	}
	if err := res.profileAfterRounds(ctx, lite, c.NodeName); err != nil {
		return err
	}
	if res.coldOnline, err = coldStart(ctx, c, lite, ds.pods, totalConfigMaps(ctx, kube), false); err != nil {
		return err
	}
	if res.coldOffline, err = coldStart(ctx, c, lite, ds.pods, totalConfigMaps(ctx, kube), true); err != nil {
		return err
	}
	res.reach("cold starts")
	// Last: it restarts kube-apiserver. See relist.go.
	if res.relist, err = measureRelist(ctx, c, kube, lite, ds); err != nil {
		return fmt.Errorf("lean relist: %w", err)
	}
	res.reach("lean relist")
	return nil
}

// prepareRounds syncs apiserver-lite from scratch once more, so that its
// VmHWM covers the sync and the rounds (under a CPU profile, then a heap
// profile, when it serves pprof), times the cloud's paged LIST of the data
// set and captures each server's WatchList for the client floor.
func (res *results) prepareRounds(ctx context.Context, c *framework.Cluster, sides [2]*server) error {
	kube, lite := sides[KubeSide], sides[LiteSide]
	res.profiles, res.pprof = profileNote(ctx, lite, res.cfg)
	var during func() func() error
	if res.pprof {
		during = res.prof.duringSync(ctx, lite, res.steps[len(res.steps)-1].sync.took)
	}
	if _, err := syncFreshWith(ctx, c, lite, kube, during); err != nil {
		return fmt.Errorf("sync before the rounds: %w", err)
	}
	if res.pprof {
		if err := res.prof.heap(ctx, lite, "heap-after-sync.pprof", fmt.Sprintf("apiserver-lite's heap right after that sync of %d objects", res.cfg.Objects())); err != nil {
			return err
		}
	}
	res.reach("sync before the rounds")
	var err error
	if res.cloudList, err = cloudList(ctx, kube, c.NodeName); err != nil {
		return err
	}
	for side, s := range sides {
		if res.captures[side], err = captureWatchList(ctx, s, c.NodeName); err != nil {
			return err
		}
		if res.lists[side], err = captureLists(ctx, s, c.NodeName); err != nil {
			return err
		}
	}
	res.reach("cloud LIST and WatchList captures")
	return nil
}

// profileAfterRounds profiles the WatchList informer start and takes
// apiserver-lite's heap after the rounds, then writes the summaries.
func (res *results) profileAfterRounds(ctx context.Context, lite *server, node string) error {
	if !res.pprof {
		return nil
	}
	if err := res.prof.heap(ctx, lite, "heap-after-rounds.pprof", "apiserver-lite's heap after the rounds"); err != nil {
		return err
	}
	if err := res.prof.informer(ctx, lite, node, res.captures[LiteSide], res.cfg.ProfileFor); err != nil {
		return err
	}
	if err := res.prof.summarize(ctx); err != nil {
		return err
	}
	res.profiles = res.prof.note()
	res.reach("profiles")
	return nil
}

// totalConfigMaps counts the cloud's configmaps, or -1 if it cannot, which
// no server matches.
func totalConfigMaps(ctx context.Context, kube *server) int {
	n, err := kube.countConfigMaps(ctx)
	if err != nil {
		return -1
	}
	return n
}

// measureStep grows the data set to n objects, syncs a fresh
// apiserver-lite and reads both servers' memory and LIST times.
func measureStep(ctx context.Context, c *framework.Cluster, ds *dataset, sides [2]*server, etcdProc *framework.Process, cfg Config, n int) (stepResult, error) {
	kube, lite := sides[KubeSide], sides[LiteSide]
	st := stepResult{objects: n}
	pods, cms := cfg.share(n)
	start := time.Now()
	if err := ds.grow(ctx, pods, cms); err != nil {
		return st, err
	}
	st.load = time.Since(start)
	var err error
	if st.sync, err = syncFresh(ctx, c, lite, kube); err != nil {
		return st, err
	}
	if st.lite, st.kube, st.etcd, err = readMemories(lite, kube, etcdProc); err != nil {
		return st, err
	}
	for side, s := range sides {
		if st.listJSON[side], _, err = rawList(ctx, s, c.NodeName, mediaJSON); err != nil {
			return st, err
		}
		if st.listProto[side], _, err = rawList(ctx, s, c.NodeName, mediaProtobuf); err != nil {
			return st, err
		}
	}
	if st.heldJSON, err = heldJSONBytes(ctx, lite, c.NodeName); err != nil {
		return st, err
	}
	total := totalConfigMaps(ctx, kube)
	st.coldStart, err = coldStart(ctx, c, lite, ds.pods, total, false)
	return st, err
}

// heldJSONBytes is the JSON size of the pods and configmaps s serves.
func heldJSONBytes(ctx context.Context, s *server, node string) (int64, error) {
	_, pods, err := rawList(ctx, s, node, mediaJSON)
	if err != nil {
		return 0, err
	}
	_, cms, err := rawGet(ctx, s, "/api/v1/configmaps", mediaJSON)
	return pods + cms, err
}

func readMemories(lite, kube *server, etcd *framework.Process) (l, k, e Memory, err error) {
	if l, err = ReadMemory(lite.proc.Pid()); err != nil {
		return
	}
	if k, err = ReadMemory(kube.proc.Pid()); err != nil {
		return
	}
	e, err = ReadMemory(etcd.Pid())
	return
}

// measureRound takes every side-by-side figure once, alternating which
// server goes first from round to round.
func measureRound(ctx context.Context, c *framework.Cluster, sides [2]*server, cfg Config, round int, res *results) (roundResult, error) {
	var r roundResult
	order := []int{KubeSide, LiteSide}
	if round%2 == 1 {
		order = []int{LiteSide, KubeSide}
	}
	var err error
	for _, side := range order {
		if r.list[side], err = measureLists(ctx, sides[side], c.NodeName, cfg.ListReps); err != nil {
			return r, err
		}
		if r.informer[side], r.informerItems[side], err = informerStart(ctx, sides[side], c.NodeName); err != nil {
			return r, err
		}
		l := &r.list[side]
		if l.typedJSONFloor, l.typedProtoFloor, err = res.lists[side].replay(ctx, c.NodeName, l.items); err != nil {
			return r, fmt.Errorf("%s: %w", sides[side].name, err)
		}
		var n int
		if r.informerFloor[side], n, err = replayInformer(ctx, res.captures[side], c.NodeName); err != nil {
			return r, fmt.Errorf("%s client floor: %w", sides[side].name, err)
		}
		if n != r.informerItems[side] {
			return r, fmt.Errorf("%s client floor: %d pods replayed, %d served", sides[side].name, n, r.informerItems[side])
		}
	}
	for i, side := range order {
		seqBase := (round*2 + i) * int(cfg.WatchFor.Seconds()*float64(cfg.UpdatesPerSec))
		s0, r0 := c.LinkBytes()
		var stop func() error
		if side == LiteSide && round == cfg.Rounds-1 && res.pprof {
			stop = startCPUProfile(ctx, sides[side], cfg, res.prof)
		}
		r.watch[side], err = measureWatch(ctx, sides[side], sides[KubeSide].json, c.NodeName, cfg, seqBase)
		if stop != nil {
			if perr := stop(); perr != nil {
				return r, perr
			}
		}
		if err != nil {
			return r, err
		}
		if side == LiteSide {
			s1, r1 := c.LinkBytes()
			r.linkPerEvent = float64(s1-s0+r1-r0) / float64(max(r.watch[side].updates, 1))
		}
	}
	return r, nil
}
