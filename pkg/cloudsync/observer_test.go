package cloudsync

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// recordingObserver records every Observer call as a string.
type recordingObserver struct {
	mu    sync.Mutex
	calls []string // guarded by mu
	bytes int      // guarded by mu; RelistBytes' sum
}

func (r *recordingObserver) add(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recordingObserver) Relisted(_, reason string) { r.add("relist " + reason) }
func (r *recordingObserver) CloudError(_ string, err error) {
	r.add("error " + string(apierrors.ReasonForError(err)))
}
func (r *recordingObserver) CloudHeard(string) { r.add("heard") }
func (r *recordingObserver) RelistBytes(_ string, n int) {
	r.mu.Lock()
	r.bytes += n
	r.mu.Unlock()
}

func (r *recordingObserver) relistBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

func (r *recordingObserver) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// The observer sees a failed list, the initial relist, what the cloud sent,
// and the relist after a 410, in order.
func TestObserverSeesSyncProgress(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	var mu sync.Mutex
	lists, watches := 0, 0
	live := watch.NewFakeWithChanSize(1, false)
	live.Add(cm("a", "x", 21, "v"))
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if lists++; lists == 1 {
			return nil, apierrors.NewInternalError(errors.New("etcd down"))
		}
		return cmList(uint64(10 * (lists - 1))), nil
	}
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if watches++; watches == 1 {
			return expiredWatch(), nil
		}
		return live, nil
	}
	obs := &recordingObserver{}
	s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache,
		Link: e.link, Observer: obs})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	mustWaitWatermark(t, e, 21)

	want := []string{"relist initial", "error InternalError", "relist initial", "heard", "relist expired", "heard", "heard"}
	deadline := time.Now().Add(waitTimeout)
	for !slices.Equal(obs.snapshot(), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := obs.snapshot(); !slices.Equal(got, want) {
		t.Errorf("observer calls: got %v, want %v", got, want)
	}
}

// A relist reports the bytes of the objects it received: their JSON as
// stored.
func TestObserverCountsRelistBytes(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) {
		return cmList(10, cm("a", "x", 4, "one"), cm("a", "y", 7, "a longer value")), nil
	}
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }
	e.start(t)
	mustWaitWatermark(t, e, 10)
	stored, _, err := e.store.Load(context.Background(), e.res.Key())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	want := 0
	for _, o := range stored {
		want += len(o.Raw)
	}
	if got := e.obs.relistBytes(); got != want || want == 0 {
		t.Errorf("relist bytes: got %d, want %d (the stored JSON of %d objects)", got, want, len(stored))
	}
}
