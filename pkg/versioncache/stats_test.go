package versioncache

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Stats counts objects, events, watchers, and a watcher closed because its
// buffer filled.
func TestStats(t *testing.T) {
	c := New(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, 10)
	if st := c.Stats(); st.Ready || st.Objects != 0 || st.Watchers != 0 {
		t.Fatalf("new cache: got %+v, want empty and not ready", st)
	}
	c.Replace(nil, 1)
	w, err := c.Watch(1, false, Predicate{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	if got := c.Stats(); !got.Ready || got.RV != 1 || got.Watchers != 1 || got.TooSlow != 0 {
		t.Fatalf("with a watcher: got %+v, want ready at 1 with 1 watcher", got)
	}
	// Never read w: its buffer fills and it is closed as too slow.
	rv := uint64(1)
	for i := 0; c.Stats().Watchers > 0; i++ {
		if i > 100000 {
			t.Fatalf("the unread watcher was never closed")
		}
		rv++
		typ := watch.Modified
		if rv == 2 {
			typ = watch.Added
		}
		MustApply(t, c, rv, ev(typ, MustPod(t, "ns", "o", rv, "a")))
	}
	st := c.Stats()
	if st.TooSlow != 1 || st.Objects != 1 || st.Events == 0 {
		t.Errorf("after the eviction: got %+v, want 1 too-slow watcher, 1 object and some events", st)
	}
	_ = w
}

// Stats.Bytes follows the current objects' JSON sizes through Replace,
// updates, deletions and Forget.
func TestStatsBytes(t *testing.T) {
	a, b := MustPod(t, "ns", "a", 2, "x"), MustPod(t, "ns", "b", 3, "y")
	c := MustReadyCache(t, 10, []*Object{a, b}, 3)
	if got, want := c.Stats().Bytes, int64(len(a.Raw)+len(b.Raw)); got != want {
		t.Fatalf("after Replace: got %d bytes, want %d", got, want)
	}
	a2 := MustPod(t, "ns", "a", 4, "a-much-longer-label-value")
	MustApply(t, c, 4, ev(watch.Modified, a2))
	if got, want := c.Stats().Bytes, int64(len(a2.Raw)+len(b.Raw)); got != want {
		t.Fatalf("after an update: got %d bytes, want %d", got, want)
	}
	MustApply(t, c, 5, ev(watch.Deleted, MustPod(t, "ns", "b", 5, "y")))
	if got, want := c.Stats().Bytes, int64(len(a2.Raw)); got != want {
		t.Fatalf("after a delete: got %d bytes, want %d", got, want)
	}
	c.Forget()
	if got := c.Stats().Bytes; got != 0 {
		t.Errorf("after Forget: got %d bytes, want 0", got)
	}
}
