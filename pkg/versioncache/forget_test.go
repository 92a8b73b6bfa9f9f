package versioncache

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

func TestForgetDropsStateAndWatchers(t *testing.T) {
	c := MustReadyCache(t, 10, []*Object{MustPod(t, "ns", "a", 5, "")}, 10)
	w := MustWatch(t, c, 10, false, Predicate{})
	MustApply(t, c, 11, ev(watch.Added, MustPod(t, "ns", "b", 11, "")))
	c.Forget()
	if got := drain(w); len(got) != 1 || !isClosed(w) || w.Evicted() {
		t.Errorf("watcher after Forget: got %d events, closed %v, evicted %v; want 1 event, a plain close",
			len(got), isClosed(w), w.Evicted())
	}
	if c.Ready() || c.RV() != 0 {
		t.Errorf("after Forget: got ready %v RV %d, want not ready at 0", c.Ready(), c.RV())
	}
	if _, _, err := c.Get("ns", "a"); !errors.Is(err, ErrNotReady) {
		t.Errorf("Get after Forget: got %v, want ErrNotReady", err)
	}
	if _, err := c.Watch(11, false, Predicate{}); !errors.Is(err, ErrNotReady) {
		t.Errorf("Watch after Forget: got %v, want ErrNotReady", err)
	}
	c.Replace([]*Object{MustPod(t, "ns", "c", 30, "")}, 30)
	objs, rv, err := listAll(c, Predicate{})
	if err != nil || rv != 30 || len(objs) != 1 || objs[0].Name != "c" {
		t.Errorf("Replace after Forget: got %d objects at %d (%v), want only c at 30", len(objs), rv, err)
	}
}
