package cloudsync

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// The syncers of one cloud that start together share one reading of the
// cloud's resource version: a daemon's start costs the cloud one LIST of
// one object, not one per resource. Events, which a cloud may keep in an
// etcd of their own, and a group of no built-in kind, which an aggregated
// API server may serve, read their own; and a shared reading behind a
// syncer's watermark makes that syncer relist, as its own would.
func TestRegressionCheckSharedAmongResources(t *testing.T) {
	for _, tt := range []struct {
		name        string
		cloudRV     uint64
		wantRelists bool
	}{
		{"cloud at the watermarks", 20, false},
		{"cloud behind the watermarks", 15, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lk := linktest.Up(t)
			var checks atomic.Int32
			var envs []*env
			relists := make([]atomic.Int32, 5)
			for i, res := range []Resource{
				{GVR: cmGVR, Namespace: "a"}, {GVR: cmGVR, Namespace: "b"}, {GVR: cmGVR, Namespace: "c"},
				{GVR: schema.GroupVersionResource{Version: "v1", Resource: "events"}},
				{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "configmaps"}},
			} {
				e := mustEnv(t, t.TempDir())
				e.res, e.link = res, lk
				seedSynced(t, e, 20)
				e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
					if o.Limit == 1 {
						checks.Add(1)
						return cmList(tt.cloudRV), nil
					}
					relists[i].Add(1)
					return nil, errors.New("relist refused by the test")
				}
				e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
					w := watch.NewFakeWithChanSize(1, false)
					w.Modify(cm("a", "one", 21, "y"))
					return w, nil
				}
				envs = append(envs, e)
			}
			// The daemon makes all its syncers, then runs them.
			var syncers []*Syncer
			for _, e := range envs {
				syncers = append(syncers, New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{},
					Store: e.store, Cache: e.cache, Link: lk}))
			}
			for _, s := range syncers {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); _ = s.Run(ctx) }()
				t.Cleanup(func() { cancel(); <-done })
			}
			for i, e := range envs {
				if !tt.wantRelists {
					mustWaitWatermark(t, e, 21)
					continue
				}
				linktest.WaitFor(t, "a relist of "+e.res.Key(), func() bool { return relists[i].Load() > 0 })
			}
			// Behind, the first report makes the others relist before
			// they check: the unshared may not get to their own.
			if got := checks.Load(); got != 3 && !(tt.wantRelists && got >= 1 && got < 3) {
				t.Errorf("resource version checks: got %d, want 3 (one shared, one each for events and example.com)", got)
			}
		})
	}
}
