package versioncache

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

func TestWatchFromNow(t *testing.T) {
	c := MustReadyCache(t, 2, []*Object{MustPod(t, "ns", "a", 5, "")}, 10)
	w, err := c.WatchFromNow(Predicate{})
	if err != nil {
		t.Fatal(err)
	}
	MustApply(t, c, 11, ev(watch.Added, MustPod(t, "ns", "b", 11, "")))
	if got := MustReceive(t, w); got.Type != watch.Added || got.Object.Name != "b" {
		t.Errorf("got %s %s, want only the change after now (ADDED b)", got.Type, got.Object.Name)
	}
	w.Stop()
	// Three more events overflow the ring of 2: the current RV is still
	// watchable, so no state is resent.
	for rv := uint64(12); rv <= 14; rv++ {
		MustApply(t, c, rv, ev(watch.Modified, MustPod(t, "ns", "b", rv, "")))
	}
	w, err = c.WatchFromNow(Predicate{})
	if err != nil {
		t.Fatal(err)
	}
	MustApply(t, c, 15, ev(watch.Deleted, MustPod(t, "ns", "b", 15, "")))
	if got := MustReceive(t, w); got.Type != watch.Deleted {
		t.Errorf("got %s, want DELETED", got.Type)
	}
	w.Stop()
	c.Close()
	if _, err := c.WatchFromNow(Predicate{}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: got %v, want ErrClosed", err)
	}
}
