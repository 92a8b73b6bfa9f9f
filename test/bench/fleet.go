//go:build e2e

package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// restartSettle is how long LISTs are still counted after every node has
// caught up following a restart.
const restartSettle = 5 * time.Second

// restartResult is what a restart cost the cloud.
type restartResult struct {
	lists    listCounts
	caughtUp time.Duration // until every node serves a change made after it
}

// fleetResults is everything one fleet run measured.
type fleetResults struct {
	cfg                   fleetConfig
	machine               machine
	lite, direct          sideCost
	cloudRestart, reboot  restartResult
	rebootLists           rebootLists
	leaseFails            [2]sideLeases // per side: kubeSide is the direct one
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
	// endLite stops the Lease renewals through the apiserver-lites.
	endLite context.CancelFunc
	// added are the suffixes of the pods added to every node after the
	// data set, in order.
	added []string
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

// runFleet measures the fleet's cost to one cloud with apiserver-lite on
// every node, a cloud restart and a reboot of every node, then the same
// nodes' kubelet read set made directly against the cloud.
func runFleet(t *testing.T, cfg fleetConfig) *fleetResults {
	ctx := t.Context()
	r := &fleetResults{cfg: cfg, machine: readMachine()}
	start := time.Now()
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true, Namespaces: []string{fleetNamespace}})
	r.cloudStart = time.Since(start)
	f := &fleet{c: c, cfg: cfg}
	steps := []struct {
		name string
		run  func() error
	}{
		{"data set", func() error { return f.load(ctx, r) }},
		{"apiserver-lite steady state", func() error { return f.liteSide(ctx, r) }},
		{"cloud restart", func() error { return f.restartCloud(ctx, r) }},
		{"reboot of every node", func() error { return f.reboot(ctx, r) }},
		{"direct steady state", func() error { return f.directSide(ctx, r) }},
	}
	for _, s := range steps {
		t.Logf("fleet: %s", s.name)
		if err := s.run(); err != nil {
			r.stopped = fmt.Errorf("%s: %w", s.name, err)
			break
		}
		r.reached = append(r.reached, s.name)
	}
	r.machine.loadEnd = loadAverage()
	return r
}

// load creates the nodes' objects in the cloud and their apiserver-lites.
func (f *fleet) load(ctx context.Context, r *fleetResults) error {
	cfg := rest.CopyConfig(f.c.AdminConfig)
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
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
		f.nodes, f.local = append(f.nodes, f.c.AddNode(nodeName(i))), append(f.local, nil)
		f.nodes[i].HoldSockets() // as apiserver-lite.socket does
	}
	return nil
}

// localClient is node i's kubelet client of its apiserver-lite's door,
// made once the daemon has started (its CA exists from then on).
func (f *fleet) localClient(i int) (kubernetes.Interface, error) {
	if f.local[i] != nil {
		return f.local[i], nil
	}
	cfg, err := f.nodes[i].LocalConfig()
	if err != nil {
		return nil, err
	}
	if f.local[i], err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return f.local[i], nil
}

// liteSide starts every node's apiserver-lite, renews the Leases through
// it, and measures the steady state. The apiserver-lites keep running.
func (f *fleet) liteSide(ctx context.Context, r *fleetResults) error {
	base, err := openWatches(ctx, f.c)
	if err != nil {
		return err
	}
	for _, n := range f.nodes {
		n.Start()
	}
	if err := f.eachNode(func(i int) error { return f.caughtUp(ctx, i, f.cfg.Pods, "") }); err != nil {
		return err
	}
	var liteCtx context.Context
	liteCtx, f.endLite = context.WithCancel(ctx)
	f.renewLeases(liteCtx, f.local, &r.leaseFails[liteSide])
	time.Sleep(f.cfg.Settle)
	r.lite, err = measureSide(ctx, f.c, f.cfg.Window, base)
	return err
}

// restartCloud restarts kube-apiserver with every node connected, then
// changes every node's pods and times until all serve the change.
func (f *fleet) restartCloud(ctx context.Context, r *fleetResults) error {
	start := time.Now()
	r.enterPhase(phaseCloudRestart)
	defer r.enterPhase(phaseSteady)
	f.c.StopCloud()
	f.c.StartCloud()
	var err error
	r.cloudRestart, err = f.changeAndCatchUp(ctx, start, time.Now(), "c")
	return err
}

// reboot restarts every node's apiserver-lite at once, each as systemctl
// restart does: SIGTERM, then a start on the sockets held for its doors.
func (f *fleet) reboot(ctx context.Context, r *fleetResults) error {
	r.enterPhase(phaseDaemonRestart)
	defer r.enterPhase(phaseSteady)
	start := time.Now()
	if err := f.eachNode(func(i int) error { return f.restartNode(i) }); err != nil {
		return err
	}
	var err error
	r.reboot, err = f.changeAndCatchUp(ctx, start, start, "d")
	r.rebootLists = countRebootLists(f.c, start, "d")
	return err
}

// changeAndCatchUp adds a pod named <node>-<suffix> to every node and
// waits until each serves it and its secret; the time counts from from,
// the LISTs from start.
func (f *fleet) changeAndCatchUp(ctx context.Context, start, from time.Time, suffix string) (restartResult, error) {
	err := f.eachNode(func(i int) error {
		return createPod(ctx, f.admin, nodeName(i), nodeName(i)+"-"+suffix)
	})
	if err != nil {
		return restartResult{}, err
	}
	f.added = append(f.added, suffix)
	pods := f.cfg.Pods + len(f.added)
	err = f.eachNode(func(i int) error { return f.caughtUp(ctx, i, pods, nodeName(i)+"-"+suffix) })
	took := time.Since(from)
	time.Sleep(restartSettle)
	return restartResult{lists: listsSince(f.c, start), caughtUp: took}, err
}

// directSide stops the apiserver-lites and opens every node's kubelet read
// set directly against the cloud, with the same Lease renewals.
func (f *fleet) directSide(ctx context.Context, r *fleetResults) error {
	f.endLite()
	for _, n := range f.nodes {
		n.Kill()
	}
	base, err := openWatches(ctx, f.c)
	if err != nil {
		return err
	}
	direct := make([]kubernetes.Interface, len(f.nodes))
	err = f.eachNode(func(i int) error {
		cs, err := kubernetes.NewForConfig(f.nodes[i].CloudConfig)
		if err != nil {
			return err
		}
		direct[i] = cs
		return openKubeletReads(ctx, f.nodes[i].CloudConfig, nodeName(i), f.podNames(i))
	})
	if err != nil {
		return err
	}
	f.renewLeases(ctx, direct, &r.leaseFails[kubeSide])
	time.Sleep(f.cfg.Settle)
	r.direct, err = measureSide(ctx, f.c, f.cfg.Window, base)
	return err
}

// renewLeases renews every node's Lease through clients until ctx ends.
func (f *fleet) renewLeases(ctx context.Context, clients []kubernetes.Interface, failed *sideLeases) {
	for i, cs := range clients {
		go renewLeases(ctx, cs, nodeName(i), failed)
	}
}

// caughtUp waits until node i's apiserver-lite serves pods of its pods
// and, unless marker is empty, the secret marker.
func (f *fleet) caughtUp(ctx context.Context, i, pods int, marker string) error {
	if err := f.nodes[i].WaitReady(fleetCatchUp); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, fleetCatchUp)
	defer cancel()
	local, err := f.localClient(i)
	if err != nil {
		return err
	}
	check := func() error {
		list, err := local.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + nodeName(i)})
		if err != nil {
			return err
		}
		if len(list.Items) != pods {
			return fmt.Errorf("%s serves %d pods, want %d", nodeName(i), len(list.Items), pods)
		}
		if marker != "" {
			_, err = local.CoreV1().Secrets(fleetNamespace).Get(ctx, marker, metav1.GetOptions{})
		}
		return err
	}
	return pollUntil(ctx, check)
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
