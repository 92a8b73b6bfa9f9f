package cloudsync

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// A resumed syncer checks the cloud's resource version (a LIST of one)
// once on start, and again only after a failure that may hide a restart
// of the cloud: the answers of a running cloud (429, 403) are not one, so
// however many there are the start costs one check. The check is made on
// the watch that opens, so failed watches cost none either.
func TestRegressionCheckOncePerStart(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tt := range []struct {
		name       string
		failure    error
		wantChecks int
	}{
		{"429 from priority and fairness", apierrors.NewTooManyRequests("too many requests", 0), 1},
		{"403 while the authorizer's graph fills", apierrors.NewForbidden(gr, "", errors.New("no relationship found")), 1},
		{"connection refused", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const failures = 3
			e := mustEnv(t, t.TempDir())
			ops := []metastore.Op{{Object: storedObject(mustObject(t, cm("a", "one", 18, "x")))}}
			if err := e.store.Apply(context.Background(), e.res.Key(), ops, 20); err != nil {
				t.Fatalf("seed: %v", err)
			}
			objs, wm, err := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			e.cache.Replace(objs, wm)
			var checks, watches atomic.Int32
			live := watch.NewFake()
			e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
				if o.Limit == 1 {
					checks.Add(1)
					return cmList(20), nil
				}
				t.Error("listed, want resumed watches")
				return nil, errors.New("unexpected list")
			}
			e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
				if watches.Add(1) <= failures {
					return nil, tt.failure
				}
				return live, nil
			}
			clk := clocktesting.NewFakeClock(time.Now())
			s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache,
				Link: e.link, Clock: clk})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = s.Run(ctx) }()
			defer func() { cancel(); <-done }()
			deadline := time.Now().Add(waitTimeout)
			for watches.Load() <= failures && time.Now().Before(deadline) {
				clk.Step(time.Second) // past every backoff delay
				time.Sleep(time.Millisecond)
			}
			live.Modify(cm("a", "one", 21, "y"))
			mustWaitWatermark(t, e, 21)
			if got := int(checks.Load()); got != tt.wantChecks {
				t.Errorf("resource version checks: got %d, want %d", got, tt.wantChecks)
			}
		})
	}
}

// A syncer whose every failure was an answer of the cloud still checks
// the cloud's resource version again once the link went down and came
// back since its last check: client-go retries a reset connection and
// reports the restarted cloud's answer (a 403 before its RBAC is back),
// which may be a restored cloud.
func TestRegressionCheckAfterLinkOutage(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	seedSynced(t, e, 20)
	clk := linktest.NewRecClock()
	var probes atomic.Int32
	lk := link.New(link.Config{Clock: clk, Probe: func(context.Context) error {
		if probes.Add(1) == 2 { // the link goes down once, after it was up
			return errors.New("connection refused")
		}
		return nil
	}})
	linktest.Run(t, lk)
	linktest.WaitFor(t, "the link to come up", lk.Connected)
	var checks atomic.Int32
	e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
		if o.Limit == 1 {
			checks.Add(1)
			return cmList(20), nil
		}
		t.Error("listed, want resumed watches")
		return nil, errors.New("unexpected list")
	}
	first, live := watch.NewFake(), watch.NewFake()
	var watches atomic.Int32
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC not ready"))
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
		switch {
		case watches.Add(1) == 1:
			return first, nil
		case lk.Outages() == 0 || !lk.Connected():
			return nil, forbidden
		}
		return live, nil
	}
	runSyncer(t, e, e.store, clk, lk)
	steps := func(until func() bool) {
		deadline := time.Now().Add(waitTimeout)
		for !until() && time.Now().Before(deadline) {
			clk.Step(time.Second)
			time.Sleep(time.Millisecond)
		}
	}
	steps(func() bool { return checks.Load() == 1 })
	first.Stop() // the cloud ends the first watch; the next ones get 403
	steps(func() bool { return checks.Load() >= 2 })
	if got := checks.Load(); got != 2 {
		t.Fatalf("resource version checks: got %d, want 2 (on start and after the outage)", got)
	}
	live.Modify(cm("a", "one", 21, "y"))
	mustWaitWatermark(t, e, 21)
	if got := checks.Load(); got != 2 {
		t.Errorf("resource version checks: got %d, want 2", got)
	}
}

// A watch resumed while a check is due is vetted before its first event
// is taken: a 410 in its first frame (a restarted cloud's answer) relists
// without a check, since the relist compares the cloud's state with the
// stored history; an event, or nothing within resumeVetWindow, is held
// while the cloud's resource version is checked once.
func TestResumeVetting(t *testing.T) {
	expired := watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}}
	for _, tt := range []struct {
		name       string
		first      []watch.Event
		wantChecks int32
		wantLists  int32
		wantRV     uint64
	}{
		{"410 at once", []watch.Event{expired}, 0, 1, 30},
		{"an event at once", []watch.Event{{Type: watch.Modified, Object: cm("a", "one", 21, "y")}}, 1, 0, 21},
		{"nothing within the window", nil, 1, 0, 22},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEnv(t, t.TempDir())
			seedSynced(t, e, 20)
			var checks, lists, watches atomic.Int32
			e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
				if o.Limit == 1 {
					checks.Add(1)
					return cmList(20), nil
				}
				lists.Add(1)
				return cmList(30, cm("a", "one", 25, "relisted")), nil
			}
			first := watch.NewFakeWithChanSize(len(tt.first), false)
			for _, ev := range tt.first {
				first.Action(ev.Type, ev.Object)
			}
			live := watch.NewFake()
			e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
				if watches.Add(1) == 1 {
					return first, nil
				}
				return live, nil
			}
			clk := clocktesting.NewFakeClock(time.Now())
			runSyncer(t, e, e.store, clk, e.link)
			deadline := time.Now().Add(waitTimeout)
			for checks.Load()+lists.Load() == 0 && time.Now().Before(deadline) {
				clk.Step(resumeVetWindow / 4) // past the window and any relist delay, in steps
				time.Sleep(time.Millisecond)
			}
			if tt.wantRV == 22 {
				first.Modify(cm("a", "one", 22, "z"))
			}
			mustWaitWatermark(t, e, tt.wantRV)
			if c, l := checks.Load(), lists.Load(); c != tt.wantChecks || l != tt.wantLists {
				t.Errorf("got %d checks and %d relists, want %d and %d", c, l, tt.wantChecks, tt.wantLists)
			}
		})
	}
}
