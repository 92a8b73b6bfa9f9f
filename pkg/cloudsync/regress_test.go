package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func withUID(u *unstructured.Unstructured, uid string) *unstructured.Unstructured {
	u.SetUID(types.UID(uid))
	return u
}

func TestRegressed(t *testing.T) {
	obj := func(name string, rv uint64, uid string) *versioncache.Object {
		o, err := ToObject(withUID(cm("a", name, rv, "x"), uid))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	stored := []metastore.Object{storedObject(obj("one", 5, "u1")), storedObject(obj("two", 8, "u2"))}
	for _, tt := range []struct {
		name   string
		listed []*versioncache.Object
		listRV uint64
		want   bool
	}{
		{"same history", []*versioncache.Object{obj("one", 5, "u1"), obj("two", 12, "u2")}, 20, false},
		{"recreated after the watermark", []*versioncache.Object{obj("one", 15, "u9")}, 20, false},
		{"list behind the watermark", []*versioncache.Object{obj("one", 5, "u1")}, 9, true},
		{"other UID at a version we cover", []*versioncache.Object{obj("one", 5, "u9")}, 20, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := regressed(stored, 10, tt.listed, tt.listRV); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// restoredCloud is a cloud restored from a backup. Its first watch is
// answered by firstWatch, later ones by the returned watcher; a check of
// its resource version (a LIST of one) gets checkRV, a full LIST list.
func restoredCloud(e *env, firstWatch func() watch.Interface, checkRV uint64, list *unstructured.UnstructuredList) *watch.FakeWatcher {
	live := watch.NewFake()
	var calls atomic.Int32
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
		if calls.Add(1) == 1 && firstWatch != nil {
			return firstWatch(), nil
		}
		return live, nil
	}
	e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
		if o.Limit == 1 {
			return cmList(checkRV), nil
		}
		return list, nil
	}
	return live
}

// silentWatch is a watch a cloud behind the watermark accepts: nothing
// comes until the cloud reaches it.
func silentWatch() watch.Interface { return watch.NewFake() }

func TestClassifyRelistsOnTooLargeRV(t *testing.T) {
	tooLarge := apierrors.NewTimeoutError("Too large resource version", 1)
	tooLarge.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	for _, tt := range []struct {
		name string
		err  error
		want error // the sentinel that makes the syncer relist; nil for none
	}{
		{"410 expired", apierrors.NewResourceExpired("too old"), ErrExpired},
		{"too large", tooLarge, ErrBehind},
		{"plain timeout", apierrors.NewTimeoutError("slow", 1), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify("watch", tt.err)
			for _, sentinel := range []error{ErrExpired, errConflict, ErrBehind} {
				if is := errors.Is(got, sentinel); is != (sentinel == tt.want) {
					t.Errorf("got %v; errors.Is(%v) %v, want %v", got, sentinel, is, !is)
				}
			}
		})
	}
}

func TestCloudRVRegressionReplacesLocalState(t *testing.T) {
	for _, tt := range []struct {
		name    string
		first   func() watch.Interface
		checkRV uint64
		list    *unstructured.UnstructuredList
		want    []string
		wantRV  uint64
		reason  string // of the relist
	}{
		{"cloud behind the watermark on resume", silentWatch, 20,
			cmList(20, withUID(cm("a", "one", 15, "restored"), "u9"), cm("a", "new", 12, "n")),
			[]string{"a/new@12", "a/one@15"}, 20, RelistRegressed},
		{"410 for our watermark, other UID", expiredWatch, 120,
			cmList(120, withUID(cm("a", "one", 90, "restored"), "u9"), cm("a", "new", 110, "n")),
			[]string{"a/new@110", "a/one@90"}, 120, RelistExpired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEnv(t, t.TempDir())
			var seed []metastore.Op
			for _, u := range []*unstructured.Unstructured{withUID(cm("a", "one", 90, "old"), "u1"), withUID(cm("a", "gone", 50, "g"), "u2")} {
				seed = append(seed, metastore.Op{Object: storedObject(mustObject(t, u))})
			}
			if err := e.store.Apply(context.Background(), e.res.Key(), seed, 100); err != nil {
				t.Fatalf("seed: %v", err)
			}
			objs, wm, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
			e.cache.Replace(objs, wm)
			local, err := e.cache.Watch(100, false, versioncache.Predicate{})
			if err != nil {
				t.Fatalf("local watch: %v", err)
			}
			defer local.Stop()
			live := restoredCloud(e, tt.first, tt.checkRV, tt.list)
			e.start(t)
			mustWaitWatermark(t, e, tt.wantRV)

			if got := mustStored(t, e); !equal(got, tt.want) {
				t.Errorf("stored: got %v, want %v", got, tt.want)
			}
			if got := mustCached(t, e); !equal(got, tt.want) {
				t.Errorf("cached: got %v, want %v", got, tt.want)
			}
			for range local.Events() { // closed: the local client relists
			}
			live.Add(cm("a", "later", tt.wantRV+1, "l"))
			mustWaitWatermark(t, e, tt.wantRV+1)
			time.Sleep(50 * time.Millisecond) // a relist loop would show up here
			lists, rvs := e.lw.recorded()
			if want := fmt.Sprint(tt.wantRV); lists != 1 || rvs[len(rvs)-1] != want {
				t.Errorf("got %d lists and watch RVs %v, want 1 list and a watch from %s", lists, rvs, want)
			}
			if got := relists(&e.obs); !slices.Equal(got, []string{"relist " + tt.reason}) {
				t.Errorf("relists: got %v, want [relist %s]", got, tt.reason)
			}
		})
	}
}

// A cloud restored from a backup that already passed our watermark answers
// the resume: an ADDED of an object we hold with another UID, and no
// DELETED first, makes the syncer relist and publish the exact diff.
func TestWatchAddedWithOtherUIDRelists(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	var seed []metastore.Op
	for _, u := range []*unstructured.Unstructured{withUID(cm("a", "one", 90, "old"), "u1"), withUID(cm("a", "gone", 50, "g"), "u2")} {
		seed = append(seed, metastore.Op{Object: storedObject(mustObject(t, u))})
	}
	if err := e.store.Apply(context.Background(), e.res.Key(), seed, 100); err != nil {
		t.Fatalf("seed: %v", err)
	}
	objs, wm, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	e.cache.Replace(objs, wm)
	first := watch.NewFakeWithChanSize(2, false)
	first.Add(withUID(cm("a", "recreated-elsewhere", 101, "x"), "u7"))
	first.Add(withUID(cm("a", "one", 102, "restored"), "u9"))
	live := restoredCloud(e, func() watch.Interface { return first }, 120,
		cmList(120, withUID(cm("a", "one", 102, "restored"), "u9"), withUID(cm("a", "recreated-elsewhere", 101, "x"), "u7")))
	e.start(t)
	mustWaitWatermark(t, e, 120)
	want := []string{"a/one@102", "a/recreated-elsewhere@101"}
	if got := mustStored(t, e); !equal(got, want) {
		t.Errorf("stored: got %v, want %v", got, want)
	}
	if got := mustCached(t, e); !equal(got, want) {
		t.Errorf("cached: got %v, want %v", got, want)
	}
	live.Add(cm("a", "later", 121, "l"))
	mustWaitWatermark(t, e, 121)
	if lists, rvs := e.lw.recorded(); lists != 1 || rvs[len(rvs)-1] != "120" {
		t.Errorf("got %d lists and watch RVs %v, want 1 list and a watch from 120", lists, rvs)
	}
	if got := relists(&e.obs); !slices.Equal(got, []string{"relist " + RelistRegressed}) {
		t.Errorf("relists: got %v, want [relist %s]", got, RelistRegressed)
	}
}

// relists returns the relists obs saw, in order.
func relists(obs *recordingObserver) []string {
	var out []string
	for _, c := range obs.snapshot() {
		if strings.HasPrefix(c, "relist ") {
			out = append(out, c)
		}
	}
	return out
}

func TestWatchDeleteThenAddIsNoConflict(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	seed := []metastore.Op{{Object: storedObject(mustObject(t, withUID(cm("a", "one", 90, "old"), "u1")))}}
	if err := e.store.Apply(context.Background(), e.res.Key(), seed, 100); err != nil {
		t.Fatalf("seed: %v", err)
	}
	objs, wm, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
	e.cache.Replace(objs, wm)
	fw := watch.NewFakeWithChanSize(2, false)
	fw.Delete(withUID(cm("a", "one", 101, "old"), "u1"))
	fw.Add(withUID(cm("a", "one", 102, "new"), "u9"))
	restoredCloud(e, func() watch.Interface { return fw }, 100, nil)
	e.start(t)
	mustWaitWatermark(t, e, 102)
	if lists, _ := e.lw.recorded(); lists != 0 {
		t.Errorf("got %d lists, want none for a delete and re-create", lists)
	}
}

// When one resource finds the cloud behind its watermark, every resource
// of that cloud relists: here the other's watermark (50) is one the
// rebuilt cloud (at 60) already passed, so its own check cannot tell, and
// only the relist shows its object re-created under another UID.
func TestRegressionFoundByOneResourceRelistsTheOthers(t *testing.T) {
	seed := func(e *env, wm uint64, objs ...*unstructured.Unstructured) {
		t.Helper()
		var ops []metastore.Op
		for _, u := range objs {
			ops = append(ops, metastore.Op{Object: storedObject(mustObject(t, u))})
		}
		if err := e.store.Apply(context.Background(), e.res.Key(), ops, wm); err != nil {
			t.Fatalf("seed: %v", err)
		}
		stored, got, _ := startup.LoadObjects(context.Background(), e.store, e.res.Key(), discard)
		e.cache.Replace(stored, got)
	}
	finder, other := mustEnv(t, t.TempDir()), mustEnv(t, t.TempDir())
	other.link = finder.link
	seed(other, 50, withUID(cm("a", "one", 40, "old"), "u1"))
	restoredCloud(other, nil, 60, cmList(60, withUID(cm("a", "one", 45, "rebuilt"), "u9")))
	other.start(t)
	deadline := time.Now().Add(waitTimeout)
	for _, rvs := other.lw.recorded(); len(rvs) == 0; _, rvs = other.lw.recorded() {
		if time.Now().After(deadline) {
			t.Fatal("the other resource never resumed its watch")
		}
		time.Sleep(time.Millisecond)
	}

	seed(finder, 100, withUID(cm("a", "x", 90, "x"), "u2"))
	restoredCloud(finder, nil, 20, cmList(20))
	finder.start(t)
	mustWaitWatermark(t, finder, 20)
	mustWaitWatermark(t, other, 60)
	if got, want := mustStored(t, other), []string{"a/one@45"}; !equal(got, want) {
		t.Errorf("other stored: got %v, want %v", got, want)
	}
	for name, e := range map[string]*env{"finder": finder, "other": other} {
		if got := relists(&e.obs); !slices.Equal(got, []string{"relist " + RelistRegressed}) {
			t.Errorf("%s relists: got %v, want [relist %s]", name, got, RelistRegressed)
		}
	}
}
