//go:build e2e

package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/cpu"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/direct"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/profile"
	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// restartSettle is how long LISTs are still counted after every node has
// caught up following a restart.
const restartSettle = 5 * time.Second

const (
	// watchesBackShare is the share of its open watches before a cloud
	// restart at which the cloud counts as reconnected: a few may be
	// between a timeout and their next watch at any moment.
	watchesBackShare = 0.99
	// watchesBackWithin bounds that wait: a reflector's backoff reaches
	// 30 s, and its jitter a minute.
	watchesBackWithin = 2 * time.Minute
	// watchesPollEvery is how often the open watches are read meanwhile:
	// each read makes kube-apiserver render its whole /metrics, CPU the
	// restart's peak counts, so no oftener than its CPU is sampled.
	watchesPollEvery = cpu.SampleEvery
)

// restartResult is what a restart cost the cloud.
type restartResult struct {
	lists    listCounts
	caughtUp time.Duration // until every node serves a change made after it
	changed  time.Duration // until that change was made in the cloud
	// watchesBack is until the cloud's open watches were back after its
	// restart (see watchesBack); 0 if they were not, or for a daemon
	// restart.
	watchesBack time.Duration
	// phases are a fleet-wide daemon restart's steps; zero for the
	// cloud's restarts.
	phases rebootPhases
	// requests are the fleet's requests of every verb, watches included.
	requests int
	bytes    cloudBytes
	// cpuPeak is kube-apiserver's most CPU in one cpu.SampleEvery, in
	// cores; cpuSeries every cpu.SampleEvery's, in order.
	cpuPeak   float64
	cpuSeries []float64
	// profileCum is kube-apiserver's CPU profiles over a cloud restart,
	// from its readiness until its watches were back, by cumulative time.
	profileCum string
	// cloudStarts is how many starts a cloud restart's kube-apiserver
	// took until it was ready (StartCloudRetrying); 0 for a daemon
	// restart.
	cloudStarts int
}

// fleetResults is everything one fleet run measured.
type fleetResults struct {
	cfg                  fleetConfig
	machine              bench.Machine
	lite, direct         sideCost
	cloudRestart, reboot restartResult
	// directRestart is the cloud restart with the kubelet read sets made
	// directly.
	directRestart restartResult
	// rounds are the steady states measured, in order.
	rounds []fleetRound
	// profileTop is each side's kube-apiserver CPU profile summary, every
	// round's profiles merged; indexed by bench.LiteSide and bench.KubeSide.
	profileTop [2]string
	// suspects are each side's suspected costs found in those profiles.
	suspects    [2]profile.SuspectTimes
	rebootLists rebootLists
	// rebootWindow is where the fleet-wide daemon restart's time went.
	rebootWindow          rebootWindow
	leaseFails            [2]lease.Failures // per side: bench.KubeSide is the direct one
	reached               []string
	stopped               error
	cloudStart, fleetLoad time.Duration
}

// fleet is the running nodes of one run.
type fleet struct {
	c     *framework.Cluster
	cfg   fleetConfig
	admin kubernetes.Interface // unthrottled
	nodes []*framework.Node
	local []kubernetes.Interface // each node's apiserver-lite
	// watching are the nodes' clients of their doors for the catch-up.
	watching []kubernetes.Interface
	// added are the suffixes of the pods added to every node after the
	// data set, in order.
	added []string
	// direct are the nodes' kubelet read sets, each in its process, while
	// the direct side runs.
	direct []*direct.Proc
	// profiles holds kube-apiserver's CPU profiles; profiled lists each
	// side's, indexed by bench.LiteSide and bench.KubeSide.
	profiles string
	profiled [2][]string
}

// podNames names node i's pods, which name their secret and configmap.
func (f *fleet) podNames(i int) []string {
	var out []string
	for j := range f.cfg.Pods {
		out = append(out, fmt.Sprintf("%s-%d", nodeName(i), j))
	}
	for _, s := range f.added {
		out = append(out, nodeName(i)+"-"+s)
	}
	return out
}

// directNode is what node i's kubelet reads on the direct side.
func (f *fleet) directNode(i int) direct.Node {
	return direct.Node{Name: nodeName(i), Namespace: fleetNamespace, Pods: f.podNames(i), CatchUp: fleetCatchUp}
}

// runFleet measures the fleet's cost to one cloud with apiserver-lite on
// every node, a cloud restart and a reboot of every node, then the same
// nodes' kubelet read set made directly against the cloud.
func runFleet(t *testing.T, cfg fleetConfig) *fleetResults {
	ctx := t.Context()
	r := &fleetResults{cfg: cfg, machine: bench.ReadMachine()}
	start := time.Now()
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true, Namespaces: []string{fleetNamespace}})
	r.cloudStart = time.Since(start)
	f := &fleet{c: c, cfg: cfg}
	f.profiles = profileDir(t)
	steps := f.steps(ctx, r)
	for _, s := range steps {
		t.Logf("fleet: %s", s.name)
		r.enterStep(s.name)
		if err := s.run(); err != nil {
			r.stopped = fmt.Errorf("%s: %w", s.name, err)
			break
		}
		r.reached = append(r.reached, s.name)
	}
	r.machine.LoadEnd = bench.LoadAverage()
	return r
}

// load creates the nodes' objects in the cloud and their apiserver-lites.
func (f *fleet) load(ctx context.Context, r *fleetResults) error {
	cfg := rest.CopyConfig(f.c.AdminConfig)
	cfg.QPS, cfg.Burst = bench.ClientQPS, bench.ClientBurst
	var err error
	if f.admin, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	start := time.Now()
	if err := createFleet(ctx, f.admin, f.cfg); err != nil {
		return err
	}
	r.fleetLoad = time.Since(start)
	for i := range f.cfg.Nodes {
		f.nodes, f.local, f.watching = append(f.nodes, f.c.AddNode(nodeName(i))), append(f.local, nil), append(f.watching, nil)
		f.nodes[i].HoldSockets() // as apiserver-lite.socket does
	}
	return nil
}

// localClient is node i's kubelet client of its apiserver-lite's door,
// made once the daemon has started (its CA exists from then on). It
// speaks protobuf, as a kubelet (--kube-api-content-type) and the direct
// side's clients do, so that the Lease renewals it forwards cost the
// cloud what the direct side's do.
func (f *fleet) localClient(i int) (kubernetes.Interface, error) {
	return f.doorClient(&f.local[i], i)
}

// watchClient is node i's client of its door for the catch-up's watches,
// in protobuf as the kubelet's own (decoding every node's pods in JSON
// cost this process more than a core-second of a fleet-wide restart), on
// a connection of its own.
func (f *fleet) watchClient(i int) (kubernetes.Interface, error) {
	return f.doorClient(&f.watching[i], i)
}

// doorClient makes *cs, node i's client of its door in protobuf, unless
// made already.
func (f *fleet) doorClient(cs *kubernetes.Interface, i int) (kubernetes.Interface, error) {
	if *cs != nil {
		return *cs, nil
	}
	cfg, err := f.nodes[i].LocalConfig()
	if err != nil {
		return nil, err
	}
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeProtobuf, runtime.ContentTypeProtobuf+","+runtime.ContentTypeJSON
	if *cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return *cs, nil
}

// renewLeases renews every node's Lease through its door (localClient)
// until ctx ends.
func (f *fleet) renewLeases(ctx context.Context, failed *lease.Failures) error {
	for i := range f.nodes {
		cs, err := f.localClient(i)
		if err != nil {
			return err
		}
		go lease.Renew(ctx, cs, nodeName(i), failed)
	}
	return nil
}

// eachNode runs fn for every node, fleetWorkers at a time, and joins the
// failures.
func (f *fleet) eachNode(fn func(i int) error) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, fleetWorkers)
	errs := make([]error, len(f.nodes))
	for i := range f.nodes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
