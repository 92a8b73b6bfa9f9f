package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// runSyncer runs a Syncer for e with clk and link until the test ends.
func runSyncer(t *testing.T, e *env, store Store, clk clock.Clock, lk *link.Link) *Syncer {
	t.Helper()
	s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: store, Cache: e.cache,
		Link: lk, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// seedSynced makes e look like a resource synced up to rv with one object.
func seedSynced(t *testing.T, e *env, rv uint64) {
	t.Helper()
	ops := []metastore.Op{{Object: storedObject(mustObject(t, cm("a", "one", rv, "x")))}}
	if err := e.store.Apply(context.Background(), e.res.Key(), ops, rv); err != nil {
		t.Fatalf("seed: %v", err)
	}
	objs, wm, err := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	e.cache.Replace(objs, wm)
}

// flakyCloud answers watches with a fresh fake watcher while up, and
// refuses them while down. Its resource version stays at 10.
type flakyCloud struct {
	down    atomic.Bool
	watches chan *watch.FakeWatcher
}

func (c *flakyCloud) list(metav1.ListOptions) (runtime.Object, error) {
	if c.down.Load() {
		return nil, errors.New("connection refused")
	}
	return cmList(10), nil
}

func (c *flakyCloud) watch(metav1.ListOptions) (watch.Interface, error) {
	if c.down.Load() {
		return nil, errors.New("connection refused")
	}
	fw := watch.NewFakeWithChanSize(4, false)
	c.watches <- fw
	return fw, nil
}

func TestResumeWithinProbeIntervalAfterLongOutage(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	seedSynced(t, e, 10)
	clk := linktest.NewRecClock()
	p := &linktest.Probe{}
	p.State.Store(linktest.ProbeRefused)
	lk := link.New(link.Config{Probe: p.Probe, Clock: clk})
	cloud := &flakyCloud{watches: make(chan *watch.FakeWatcher, 8)}
	cloud.down.Store(true)
	e.lw.watch, e.lw.list = cloud.watch, cloud.list
	linktest.Run(t, lk)
	runSyncer(t, e, e.store, clk, lk)

	// An hour of outage: past the watch progress timeout the syncer
	// stops retrying on its own and waits for the prober.
	for range 360 {
		linktest.WaitFor(t, "a timer", clk.HasWaiters)
		clk.Step(link.MaxRetryDelay)
	}
	if _, rvs := e.lw.recorded(); len(rvs) > 10 {
		t.Errorf("got %d watch attempts in an hour of outage, want at most a few", len(rvs))
	}
	for _, d := range clk.Timers() {
		if d > link.MaxRetryDelay {
			t.Fatalf("got a %v timer, want none above %v", d, link.MaxRetryDelay)
		}
	}

	cloud.down.Store(false)
	p.State.Store(linktest.ProbeUp)
	// Only the prober's interval and the reconnect spread pass: the
	// syncer must not wait out its own backoff once the prober has seen
	// the link come back.
	linktest.WaitFor(t, "the prober to wait", clk.HasWaiters)
	clk.Step(link.MaxDownPause)
	fw := watchWithin(t, cloud, clk, link.DefaultRelistSpread)
	fw.Add(cm("a", "two", 11, "y"))
	mustWaitWatermark(t, e, 11)
	if _, rvs := e.lw.recorded(); rvs[len(rvs)-1] != "10" {
		t.Errorf("resumed watch RV: got %s, want 10", rvs[len(rvs)-1])
	}
}

func TestDeadLinkEndsCloudWatch(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	seedSynced(t, e, 10)
	clk := linktest.NewRecClock()
	p := &linktest.Probe{}
	lk := link.New(link.Config{Probe: p.Probe, Clock: clk, WatchProgressTimeout: 6 * time.Second})
	cloud := &flakyCloud{watches: make(chan *watch.FakeWatcher, 8)}
	e.lw.watch, e.lw.list = cloud.watch, cloud.list
	linktest.Run(t, lk)
	linktest.WaitFor(t, "link up", lk.Connected)
	runSyncer(t, e, e.store, clk, lk)
	half := <-cloud.watches // the connection under it goes half-open

	p.State.Store(linktest.ProbeBlackHole)
	deadline := time.Now().Add(waitTimeout)
	for !half.IsStopped() {
		if time.Now().After(deadline) {
			t.Fatalf("cloud watch not ended within %v of a dead link", waitTimeout)
		}
		if clk.HasWaiters() {
			clk.Step(time.Second)
		}
		time.Sleep(time.Millisecond)
	}
	if clk.Since(time.Unix(1e9, 0)) < 6*time.Second {
		t.Errorf("watch ended after %v of fake time, want not before the 6 s timeout", clk.Since(time.Unix(1e9, 0)))
	}
	select {
	case <-cloud.watches:
		t.Fatalf("got a new cloud watch while the link is dead, want a wait for the link")
	case <-time.After(20 * time.Millisecond):
	}

	p.State.Store(linktest.ProbeUp)
	var fresh *watch.FakeWatcher
	deadline = time.Now().Add(waitTimeout)
	for fresh == nil {
		select {
		case fresh = <-cloud.watches:
		case <-time.After(time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatalf("no new cloud watch after the link came back")
			}
			if clk.HasWaiters() {
				clk.Step(time.Second)
			}
		}
	}
	fresh.Add(cm("a", "two", 11, "y"))
	mustWaitWatermark(t, e, 11)
	if _, rvs := e.lw.recorded(); rvs[len(rvs)-1] != "10" {
		t.Errorf("re-established watch RV: got %s, want 10", rvs[len(rvs)-1])
	}
}

// fullDisk fails every Apply while full is set.
type fullDisk struct {
	*metastore.Store
	full    atomic.Bool
	applies atomic.Int32
}

func (f *fullDisk) Apply(ctx context.Context, r string, ops []metastore.Op, wm uint64) error {
	f.applies.Add(1)
	if f.full.Load() {
		return errors.New("database or disk is full")
	}
	return f.Store.Apply(ctx, r, ops, wm)
}

func TestFullDiskBacksOffAndResumes(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	disk := &fullDisk{Store: e.store}
	disk.full.Store(true)
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) { return cmList(10, cm("a", "one", 9, "x")), nil }
	cloud := &flakyCloud{watches: make(chan *watch.FakeWatcher, 8)}
	e.lw.watch = cloud.watch
	clk := linktest.NewRecClock()
	s := runSyncer(t, e, disk, clk, linktest.Up(t))

	const failures = 6
	for range failures {
		linktest.WaitFor(t, "the syncer to back off", clk.HasWaiters)
		clk.Step(link.MaxRetryDelay)
	}
	linktest.WaitFor(t, "the syncer to back off", clk.HasWaiters)
	for k, d := range clk.Timers()[:failures] {
		if want := min(link.NewBackoff().Duration<<k, link.NewBackoff().Cap); d < want {
			t.Errorf("pause %d: got %v, want at least %v (backoff reset before a commit?)", k, d, want)
		}
	}
	if err := s.StoreError(); err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Errorf("StoreError: got %v, want the disk-full error", err)
	}
	if e.cache.Ready() {
		t.Errorf("cache: got ready, want nothing visible before it is durable")
	}

	disk.full.Store(false)
	clk.Step(link.MaxRetryDelay)
	mustWaitWatermark(t, e, 10)
	if err := s.StoreError(); err != nil {
		t.Errorf("StoreError after a commit: got %v, want nil", err)
	}
	if got, want := mustCached(t, e), []string{"a/one@9"}; !equal(got, want) {
		t.Errorf("cached: got %v, want %v", got, want)
	}
	// A commit reset the backoff: the next failure pauses briefly again.
	cloud.down.Store(true)
	(<-cloud.watches).Stop()
	linktest.WaitFor(t, "a pause after the reset", func() bool { return len(clk.Timers()) > failures+1 })
	if d := clk.Timers()[failures+1]; d > time.Duration(float64(link.NewBackoff().Duration)*(1+link.NewBackoff().Jitter)) {
		t.Errorf("first pause after a commit: got %v, want the initial delay", d)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	tooMany := apierrors.NewTooManyRequests("slow down", 7)
	unavailable := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 503,
		Reason: metav1.StatusReasonServiceUnavailable, Details: &metav1.StatusDetails{RetryAfterSeconds: 9}}}
	for _, tt := range []struct {
		name string
		err  error
		want time.Duration
	}{
		{"429", tooMany, 7 * time.Second},
		{"503", unavailable, 9 * time.Second},
		{"wrapped", fmt.Errorf("list: %w", tooMany), 7 * time.Second},
		{"plain", errors.New("connection refused"), link.NewBackoff().Duration},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEnv(t, t.TempDir())
			e.lw.list = func(metav1.ListOptions) (runtime.Object, error) { return nil, tt.err }
			clk := linktest.NewRecClock()
			runSyncer(t, e, e.store, clk, linktest.Up(t))
			linktest.WaitFor(t, "the syncer to pause", clk.HasWaiters)
			got := clk.Timers()[0]
			if got < tt.want || got > max(tt.want*5/4, link.MaxRetryDelay) { // +25%: the syncers' jitter
				t.Errorf("pause: got %v, want at least %v", got, tt.want)
			}
			clk.Step(got - time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			if lists, _ := e.lw.recorded(); lists != 1 {
				t.Errorf("got %d lists before the pause ended, want 1", lists)
			}
		})
	}
}

func TestConcurrentRelistsBounded(t *testing.T) {
	const resources, limit = 6, 2
	lk := link.New(link.Config{Probe: func(context.Context) error { return nil }, MaxConcurrentRelists: limit})
	linktest.Run(t, lk)
	linktest.WaitFor(t, "the link to come up", lk.Connected)
	var mu sync.Mutex
	var inFlight, peak, total int // guarded by mu
	release := make(chan struct{})
	list := func(metav1.ListOptions) (runtime.Object, error) {
		mu.Lock()
		inFlight++
		total++
		peak = max(peak, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return cmList(10), nil
	}
	dir := t.TempDir()
	base := mustEnv(t, dir)
	for i := range resources {
		e := &env{store: base.store, cache: versioncache.New(cmGVR, 10), lw: &fakeLW{list: list,
			watch: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }},
			res: Resource{GVR: cmGVR, Namespace: fmt.Sprint("ns", i)}, link: lk}
		runSyncer(t, e, e.store, nil, lk)
	}
	linktest.WaitFor(t, "relists to start", func() bool { mu.Lock(); defer mu.Unlock(); return inFlight == limit })
	time.Sleep(20 * time.Millisecond)
	for done := 0; done < resources; done++ {
		release <- struct{}{}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != limit || total != resources {
		t.Errorf("got peak %d of %d relists, want peak %d of %d", peak, total, limit, resources)
	}
}

// watchWithin steps clk in small steps, at most spread in all, until the
// syncer opens a cloud watch, and returns it.
func watchWithin(t *testing.T, cloud *flakyCloud, clk *linktest.RecClock, spread time.Duration) *watch.FakeWatcher {
	t.Helper()
	const step = 100 * time.Millisecond
	for stepped := time.Duration(0); ; stepped += step {
		select {
		case fw := <-cloud.watches:
			return fw
		case <-time.After(20 * time.Millisecond):
		}
		if stepped >= spread {
			t.Fatalf("no watch within %v of fake time after the link came back", spread)
		}
		clk.Step(step)
	}
}
