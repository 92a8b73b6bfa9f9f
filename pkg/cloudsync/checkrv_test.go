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
// however many there are the start costs one check.
func TestRegressionCheckOncePerStart(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tt := range []struct {
		name       string
		failure    error
		wantChecks int
	}{
		{"429 from priority and fairness", apierrors.NewTooManyRequests("too many requests", 0), 1},
		{"403 while the authorizer's graph fills", apierrors.NewForbidden(gr, "", errors.New("no relationship found")), 1},
		{"connection refused", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), 4},
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
	live := watch.NewFake()
	e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
		if o.Limit == 1 {
			checks.Add(1)
			return cmList(20), nil
		}
		t.Error("listed, want resumed watches")
		return nil, errors.New("unexpected list")
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC not ready"))
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
		if lk.Outages() == 0 || !lk.Connected() || checks.Load() < 2 {
			return nil, forbidden
		}
		return live, nil
	}
	runSyncer(t, e, e.store, clk, lk)
	deadline := time.Now().Add(waitTimeout)
	for checks.Load() < 2 && time.Now().Before(deadline) {
		clk.Step(time.Second)
		time.Sleep(time.Millisecond)
	}
	if got := checks.Load(); got != 2 {
		t.Fatalf("resource version checks: got %d, want 2 (on start and after the outage)", got)
	}
	for range 20 { // let the syncer reach its live watch
		clk.Step(time.Second)
		time.Sleep(time.Millisecond)
	}
	live.Modify(cm("a", "one", 21, "y"))
	mustWaitWatermark(t, e, 21)
	if got := checks.Load(); got != 2 {
		t.Errorf("resource version checks: got %d, want 2", got)
	}
}
