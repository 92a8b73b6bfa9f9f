package pool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeUpstream is a lister and watcher at the network edge: it records
// each call's resourceVersion and answers with err, or a fake watch.
type fakeUpstream struct {
	mu      sync.Mutex
	watches []string // resourceVersions asked, guarded by mu
	lists   int      // guarded by mu
	err     error    // guarded by mu
	last    *watch.FakeWatcher
}

func (f *fakeUpstream) lw() cache.ListerWatcherWithContext {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lists++
			if f.err != nil {
				return nil, f.err
			}
			return &metav1.List{}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.watches = append(f.watches, o.ResourceVersion)
			if f.err != nil {
				return nil, f.err
			}
			f.last = watch.NewFake()
			return f.last, nil
		},
	}
}

func (f *fakeUpstream) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.watches...)
}

func (f *fakeUpstream) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

type rig struct {
	cloud, leader *fakeUpstream
	clock         *clocktesting.FakeClock
	stats         *Stats
	up            *Upstream
	mu            sync.Mutex
	hasLeader     bool          // guarded by mu
	changed       chan struct{} // guarded by mu
}

func newRig() *rig {
	r := &rig{cloud: &fakeUpstream{}, leader: &fakeUpstream{}, hasLeader: true, changed: make(chan struct{}),
		clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), stats: NewStats()}
	r.up = NewUpstream(UpstreamConfig{Resource: "discovery.k8s.io/v1/endpointslices", Cloud: r.cloud.lw(), Stats: r.stats,
		Clock: r.clock, Leader: func() (Source, <-chan struct{}, bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			return Source{Name: "pool:edge-a", LW: r.leader.lw()}, r.changed, r.hasLeader
		}})
	return r
}

func (r *rig) watch(t *testing.T, rv string) watch.Interface {
	t.Helper()
	w, err := r.up.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatalf("watch from %s: %v", rv, err)
	}
	return w
}

func (r *rig) upstream() string {
	return r.stats.Snapshot()["discovery.k8s.io/v1/endpointslices"].Upstream
}

func gone() error { return apierrors.NewResourceExpired("too old resource version: 5 (10)") }

// tooLarge is kube-apiserver's answer to a resourceVersion it has not
// reached (listwatch/response.TooLargeRV mirrors it).
func tooLarge() error {
	err := apierrors.NewTimeoutError("Too large resource version: 25, current: 20", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}

// expectClosed waits for w's channel to close without an ERROR event.
func expectClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				t.Fatalf("the syncer got the leader's error %v", ev.Object)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the leader's watch never ended")
		}
	}
}

func TestUpstreamWatch(t *testing.T) {
	t.Run("the leader serves, events pass", func(t *testing.T) {
		r := newRig()
		w := r.watch(t, "10")
		go r.leader.last.Add(&metav1.Status{}) // any object
		if ev := <-w.ResultChan(); ev.Type != watch.Added {
			t.Errorf("got %s, want ADDED", ev.Type)
		}
		if got, want := r.upstream(), "pool:edge-a"; got != want {
			t.Errorf("upstream %q, want %q", got, want)
		}
		if got := r.cloud.asked(); len(got) != 0 {
			t.Errorf("cloud watched from %v, want no cloud watch", got)
		}
	})
	t.Run("a cloud watch taken instead of the leader ends after LeaderRetry", func(t *testing.T) {
		r := newRig()
		r.leader.fail(errors.New("connection refused"))
		w := r.watch(t, "10")
		r.leader.fail(nil)
		r.clock.Step(LeaderRetry)
		expectClosed(t, w)
		r.watch(t, "12")
		if got := r.leader.asked(); len(got) != 2 || got[1] != "12" {
			t.Errorf("the leader was asked %v, want a second watch from 12", got)
		}
	})
	t.Run("no leader: the cloud, until one is elected", func(t *testing.T) {
		r := newRig()
		r.hasLeader = false
		w := r.watch(t, "10")
		if got := r.cloud.asked(); len(got) != 1 || got[0] != "10" {
			t.Errorf("cloud watched from %v, want [10]", got)
		}
		go r.cloud.last.Error(&gone().(*apierrors.StatusError).ErrStatus)
		if ev := <-w.ResultChan(); ev.Type != watch.Error {
			t.Errorf("the cloud's error came as %s, want ERROR: only the cloud's 410 relists", ev.Type)
		}
		r.mu.Lock()
		r.hasLeader = true
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
		expectClosed(t, w)
		r.watch(t, "11")
		if got := r.leader.asked(); len(got) != 1 || got[0] != "11" {
			t.Errorf("after the election the leader was asked %v, want [11]", got)
		}
	})
	for _, tc := range []struct {
		name string
		err  error
		// wantLeaderAfter: the call after the cloud's goes to the leader
		// again at once (a 410), not only after LeaderRetry.
		wantLeaderAfter bool
	}{
		{"the leader's 410: the same RV at the cloud", gone(), true},
		{"a leader behind: the same RV at the cloud, then the cloud for a while", tooLarge(), false},
		{"an unreachable leader: the cloud for a while", errors.New("dial tcp 10.0.0.1:10552: connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig()
			r.leader.fail(tc.err)
			r.watch(t, "10")
			if got := r.cloud.asked(); len(got) != 1 || got[0] != "10" {
				t.Fatalf("cloud watched from %v, want [10]", got)
			}
			r.leader.fail(nil)
			r.watch(t, "12")
			wantLeader := 1
			if tc.wantLeaderAfter {
				wantLeader = 2
			}
			if got := r.leader.asked(); len(got) != wantLeader {
				t.Fatalf("leader asked %v, want %d watches", got, wantLeader)
			}
			r.clock.Step(LeaderRetry) // ends the cloud watch taken instead
			r.watch(t, "14")
			if got := r.leader.asked(); got[len(got)-1] != "14" {
				t.Errorf("after LeaderRetry the leader was asked %v, want the last from 14", got)
			}
		})
	}
}

func TestUpstreamLeaderStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(r *rig)
		// wantCloudNext: the next watch goes to the cloud.
		wantCloudNext bool
	}{
		{"the leader's 410 in the stream", func(r *rig) {
			r.leader.last.Error(&gone().(*apierrors.StatusError).ErrStatus)
		}, true},
		{"a too-large RV in the stream", func(r *rig) {
			r.leader.last.Error(&tooLarge().(*apierrors.StatusError).ErrStatus)
		}, true},
		{"the leader's stream ends (it died, or its timeout)", func(r *rig) { r.leader.last.Stop() }, false},
		{"the Lease names another leader", func(r *rig) {
			r.mu.Lock()
			close(r.changed)
			r.changed = make(chan struct{})
			r.mu.Unlock()
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig()
			w := r.watch(t, "10")
			go tc.end(r)
			expectClosed(t, w)
			r.watch(t, "10")
			cloud := len(r.cloud.asked()) == 1
			if cloud != tc.wantCloudNext {
				t.Errorf("next watch at the cloud: %v, want %v (cloud %v, leader %v)",
					cloud, tc.wantCloudNext, r.cloud.asked(), r.leader.asked())
			}
		})
	}
}

func TestUpstreamCloudsOwn410ReachesTheSyncer(t *testing.T) {
	r := newRig()
	r.hasLeader = false
	r.cloud.fail(gone())
	_, err := r.up.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "3"})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("got %v, want the cloud's 410", err)
	}
}

func TestUpstreamList(t *testing.T) {
	r := newRig()
	if _, err := r.up.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if r.leader.lists != 1 || r.cloud.lists != 0 {
		t.Errorf("lists: leader %d, cloud %d; want 1, 0", r.leader.lists, r.cloud.lists)
	}
	r.leader.fail(errors.New("connection refused"))
	if _, err := r.up.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if r.leader.lists != 2 || r.cloud.lists != 1 {
		t.Errorf("lists: leader %d, cloud %d; want 2, 1", r.leader.lists, r.cloud.lists)
	}
}
