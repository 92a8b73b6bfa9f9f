package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// waitTimeout bounds every wait for the asynchronous sync loop in tests.
const waitTimeout = 10 * time.Second

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// fakeLW is a cloud ListerWatcher at the network edge: lists and watches
// are answered by the test's functions, and requests are recorded.
type fakeLW struct {
	list  func(opts metav1.ListOptions) (runtime.Object, error)
	watch func(opts metav1.ListOptions) (watch.Interface, error)

	mu       sync.Mutex
	watchRVs []string // guarded by mu
	lists    int      // guarded by mu
}

// ListWithContext records full lists only: a LIST with Limit 1 is the
// syncer's check of the cloud's resource version.
func (f *fakeLW) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	if o.Limit != 1 {
		f.lists++
	}
	f.mu.Unlock()
	return f.list(o)
}

func (f *fakeLW) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	f.watchRVs = append(f.watchRVs, o.ResourceVersion)
	f.mu.Unlock()
	return f.watch(o)
}

func (f *fakeLW) recorded() (lists int, watchRVs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists, append([]string(nil), f.watchRVs...)
}

type fakeDiscovery struct{}

func (fakeDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "list", "watch"}},
		{Name: "events", Namespaced: true, Kind: "Event", Verbs: metav1.Verbs{"get", "list", "watch"}},
	}}, nil
}

func cm(ns, name string, rv uint64, data string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": strconv.FormatUint(rv, 10)},
		"data":     map[string]any{"v": data},
	}}
}

func cmList(rv uint64, items ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}
	l.SetResourceVersion(strconv.FormatUint(rv, 10))
	for _, i := range items {
		l.Items = append(l.Items, *i)
	}
	return l
}

func bookmark(rv uint64) watch.Event {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	o.SetResourceVersion(strconv.FormatUint(rv, 10))
	return watch.Event{Type: watch.Bookmark, Object: o}
}

// env is one resource's real store and cache plus the fake cloud.
type env struct {
	store *metastore.Store
	cache *versioncache.Cache
	lw    *fakeLW
	res   Resource
	link  *link.Link
	obs   recordingObserver // what the syncer started by start reports
}

func mustEnv(t *testing.T, dir string) *env {
	t.Helper()
	st, err := metastore.Open(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &env{store: st, cache: versioncache.New(cmGVR, 100), lw: &fakeLW{}, res: Resource{GVR: cmGVR}, link: linktest.Up(t)}
}

// start runs a Syncer until the test ends.
func (e *env) start(t *testing.T) {
	t.Helper()
	s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache, Link: e.link,
		Observer: &e.obs})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func mustWaitWatermark(t *testing.T, e *env, want uint64) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		_, wm, err := e.store.Load(context.Background(), e.res.Key())
		if err != nil {
			t.Fatalf("watermark: %v", err)
		}
		if wm == want && e.cache.RV() == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, wm, _ := e.store.Load(context.Background(), e.res.Key())
	t.Fatalf("got watermark %d and cache RV %d, want %d", wm, e.cache.RV(), want)
}

// mustStored returns the stored objects as "ns/name@rv=data".
func mustStored(t *testing.T, e *env) []string {
	t.Helper()
	objs, _, err := e.store.Load(context.Background(), e.res.Key())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s/%s@%d", o.Namespace, o.Name, o.RV))
	}
	return out
}

func mustCached(t *testing.T, e *env) []string {
	t.Helper()
	page, err := e.cache.ListPage(versioncache.PageOptions{})
	if err != nil {
		t.Fatalf("list cache: %v", err)
	}
	var out []string
	for _, o := range page.Objects {
		out = append(out, fmt.Sprintf("%s/%s@%d", o.Namespace, o.Name, o.RV))
	}
	return out
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestFirstSyncListsThenWatches(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	fw := watch.NewFake()
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) {
		return cmList(10, cm("a", "one", 5, "1"), cm("a", "two", 7, "2")), nil
	}
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) { return fw, nil }
	e.start(t)
	mustWaitWatermark(t, e, 10)
	fw.Add(cm("a", "three", 11, "3"))
	fw.Modify(cm("a", "one", 12, "1b"))
	fw.Delete(cm("a", "two", 13, "2"))
	fw.Action(watch.Bookmark, bookmark(15).Object)
	mustWaitWatermark(t, e, 15)

	want := []string{"a/one@12", "a/three@11"}
	if got := mustStored(t, e); !equal(got, want) {
		t.Errorf("stored: got %v, want %v", got, want)
	}
	if got := mustCached(t, e); !equal(got, want) {
		t.Errorf("cached: got %v, want %v", got, want)
	}
	if _, rvs := e.lw.recorded(); len(rvs) == 0 || rvs[0] != "10" {
		t.Errorf("watch RVs: got %v, want first 10", rvs)
	}
	if info, ok := e.cache.Info(); !ok || info.Kind != "ConfigMap" {
		t.Errorf("info: got %+v %v, want kind ConfigMap", info, ok)
	}
	if !e.link.Connected() {
		t.Errorf("link: got disconnected, want connected")
	}
}

func TestResumeFromWatermarkWithoutList(t *testing.T) {
	dir := t.TempDir()
	e := mustEnv(t, dir)
	ops := []metastore.Op{{Object: storedObject(mustObject(t, cm("a", "one", 18, "x")))}}
	if err := e.store.Apply(context.Background(), e.res.Key(), ops, 20); err != nil {
		t.Fatalf("seed: %v", err)
	}
	objs, wm, err := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	e.cache.Replace(objs, wm)
	fw := watch.NewFake()
	e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
		if o.Limit == 1 {
			return cmList(20), nil // the resume's check of the cloud's RV
		}
		t.Error("listed, want a resumed watch")
		return nil, errors.New("unexpected list")
	}
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) { return fw, nil }
	e.start(t)
	fw.Modify(cm("a", "one", 21, "y"))
	mustWaitWatermark(t, e, 21)
	if _, rvs := e.lw.recorded(); rvs[0] != "20" {
		t.Errorf("watch RV: got %v, want 20", rvs)
	}
}

func mustObject(t *testing.T, u *unstructured.Unstructured) *versioncache.Object {
	t.Helper()
	o, err := ToObject(u)
	if err != nil {
		t.Fatalf("object: %v", err)
	}
	return o
}

func expiredWatch() watch.Interface {
	fw := watch.NewFakeWithChanSize(1, false)
	st := apierrors.NewResourceExpired("too old resource version: 10 (15)").ErrStatus
	fw.Error(&st)
	return fw
}

func TestRelistAfter410PublishesDiff(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	var seed []metastore.Op
	for _, o := range []*unstructured.Unstructured{cm("a", "keep", 5, "k"), cm("a", "mod", 6, "m"), cm("a", "gone1", 7, "g"), cm("b", "gone2", 8, "g"),
		withUID(cm("a", "re", 9, "r"), "u-old")} {
		seed = append(seed, metastore.Op{Object: storedObject(mustObject(t, o))})
	}
	if err := e.store.Apply(context.Background(), e.res.Key(), seed, 10); err != nil {
		t.Fatalf("seed: %v", err)
	}
	objs, _, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	e.cache.SetInfo(versioncache.Info{Name: "configmaps", Kind: "ConfigMap", Namespaced: true})
	e.cache.Replace(objs, 10)
	local, err := e.cache.Watch(10, false, versioncache.Predicate{})
	if err != nil {
		t.Fatalf("local watch: %v", err)
	}
	defer local.Stop()

	live := watch.NewFake()
	var calls int
	var mu sync.Mutex
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 1 {
			return expiredWatch(), nil
		}
		return live, nil
	}
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) {
		return cmList(20, cm("a", "keep", 5, "k"), cm("a", "mod", 12, "m2"), cm("a", "new", 11, "n"),
			withUID(cm("a", "re", 13, "r2"), "u-new")), nil
	}
	e.start(t)
	mustWaitWatermark(t, e, 20)

	// a/re was deleted and created again: a watch shows that, not a
	// MODIFIED that changes the UID.
	want := []string{"ADDED a/new@11", "MODIFIED a/mod@12", "DELETED a/re@13", "ADDED a/re@13", "DELETED a/gone1@20", "DELETED b/gone2@20"}
	var got []string
	for len(got) < len(want) {
		select {
		case ev, ok := <-local.Events():
			if !ok {
				t.Fatalf("local watch closed after %v, want %v", got, want)
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			got = append(got, fmt.Sprintf("%s %s/%s@%d", ev.Type, ev.Object.Namespace, ev.Object.Name, ev.RV))
		case <-time.After(waitTimeout):
			t.Fatalf("local events: got %v, want %v", got, want)
		}
	}
	if !equal(got, want) {
		t.Errorf("local events: got %v, want %v", got, want)
	}
	if local.Evicted() {
		t.Errorf("local watcher evicted, want it to continue")
	}
	wantState := []string{"a/keep@5", "a/mod@12", "a/new@11", "a/re@13"}
	if got := mustStored(t, e); !equal(got, wantState) {
		t.Errorf("stored: got %v, want %v", got, wantState)
	}
	if lists, rvs := e.lw.recorded(); lists != 1 || rvs[len(rvs)-1] != "20" {
		t.Errorf("got %d lists and watch RVs %v, want 1 list and a watch from 20", lists, rvs)
	}
}

// failingStore fails the first Apply, like a full disk would.
type failingStore struct {
	*metastore.Store
	mu     sync.Mutex
	failed bool // guarded by mu
}

func (f *failingStore) Apply(ctx context.Context, r string, ops []metastore.Op, wm uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failed && len(ops) > 0 && wm > 10 {
		f.failed = true
		return errors.New("disk full")
	}
	return f.Store.Apply(ctx, r, ops, wm)
}

func TestFailedCommitIsNotPublishedAndIsRetried(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	fs := &failingStore{Store: e.store}
	watches := make(chan *watch.FakeWatcher, 4)
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) { return cmList(10), nil }
	e.lw.watch = func(o metav1.ListOptions) (watch.Interface, error) {
		fw := watch.NewFakeWithChanSize(1, false)
		fw.Add(cm("a", "x", 11, "1")) // the cloud redelivers from the watermark
		watches <- fw
		return fw, nil
	}
	s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: fs, Cache: e.cache, Link: e.link})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	mustWaitWatermark(t, e, 11)
	if _, rvs := e.lw.recorded(); len(rvs) < 2 || rvs[1] != "10" {
		t.Errorf("watch RVs: got %v, want a retry from 10", rvs)
	}
	if got, want := mustCached(t, e), []string{"a/x@11"}; !equal(got, want) {
		t.Errorf("cached: got %v, want %v", got, want)
	}
}

// Each syncer is one loop, which ends with its context.
func TestRunnersOf(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	for _, n := range []int{0, 2} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			syncers := make([]*Syncer, n)
			for i := range syncers {
				syncers[i] = New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache, Link: e.link})
			}
			runs := RunnersOf(syncers)
			if len(runs) != n {
				t.Fatalf("got %d loops, want %d", len(runs), n)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for i, run := range runs {
				if err := run(ctx); err != nil {
					t.Errorf("loop %d after its context ended: got %v, want nil", i, err)
				}
			}
		})
	}
}
