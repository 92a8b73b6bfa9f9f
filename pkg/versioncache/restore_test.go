package versioncache

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

// A restored cache serves watches from any RV from the floor on with the
// restored events, as the cache it was saved from did.
func TestRestore(t *testing.T) {
	a1, b2 := MustPod(t, "ns", "a", 1, "web"), MustPod(t, "ns", "b", 2, "web")
	a5, b6, c7 := MustPod(t, "ns", "a", 5, "db"), MustPod(t, "ns", "b", 6, "web"), MustPod(t, "ns", "c", 7, "web")
	events := []Event{
		{Type: watch.Modified, Object: a5, Prev: a1},
		{Type: watch.Deleted, Object: b6, Prev: b2},
		{Type: watch.Added, Object: c7},
	}
	c := New(podsGVR, 10)
	t.Cleanup(c.Close)
	if err := c.Restore([]*Object{a5, c7}, 8, events, 4); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if !c.Ready() || c.RV() != 8 {
		t.Fatalf("got ready %v rv %d, want ready at 8", c.Ready(), c.RV())
	}
	tests := []struct {
		from uint64
		p    Predicate
		want []string
	}{
		{4, Predicate{}, []string{"MODIFIED a 5", "DELETED b 6", "ADDED c 7"}},
		{5, Predicate{}, []string{"DELETED b 6", "ADDED c 7"}},
		{8, Predicate{}, nil},
		// a stops matching app=web at 5: its Prev tells the watcher.
		{4, Predicate{Label: MustLabelSelector(t, "app=web")}, []string{"DELETED a 5", "DELETED b 6", "ADDED c 7"}},
	}
	for _, tt := range tests {
		w := MustWatch(t, c, tt.from, false, tt.p)
		if got := summary(w.Initial()); !slices.Equal(got, tt.want) {
			t.Errorf("watch from %d (%v): got %v, want %v", tt.from, tt.p.Label, got, tt.want)
		}
	}
	if _, err := c.Watch(3, false, Predicate{}); err == nil {
		t.Errorf("watch from below the floor: got no error, want a TooOldError")
	} else if too, ok := isTooOld(err); !ok || too.Oldest != 4 {
		t.Errorf("watch from below the floor: got %v, want too old with oldest 4", err)
	}
	// Listing at the floor rolls the state back through the Prevs.
	pg, err := c.ListPage(PageOptions{RV: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range pg.Objects {
		got = append(got, o.Name)
	}
	if want := []string{"a", "b"}; !slices.Equal(got, want) || pg.Objects[0].RV != 1 {
		t.Errorf("list at 4: got %v (a at %d), want %v with a at 1", got, pg.Objects[0].RV, want)
	}
}

// More events than the ring holds evict the oldest, raising the floor.
func TestRestoreMoreEventsThanCapacity(t *testing.T) {
	var events []Event
	var objs []*Object
	for rv := uint64(11); rv <= 15; rv++ {
		o := MustPod(t, "ns", "p"+string(rune('a'+rv-11)), rv, "")
		events = append(events, ev(watch.Added, o))
		objs = append(objs, o)
	}
	c := New(podsGVR, 3)
	t.Cleanup(c.Close)
	if err := c.Restore(objs, 15, events, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Watch(11, false, Predicate{}); err == nil {
		t.Errorf("watch from an evicted RV: got no error, want a TooOldError")
	}
	w := MustWatch(t, c, 12, false, Predicate{})
	if got := rvs(w.Initial()); !slices.Equal(got, []uint64{13, 14, 15}) {
		t.Errorf("watch from 12: got %v, want [13 14 15]", got)
	}
}

func TestRestoreRejectsBadInput(t *testing.T) {
	p5, p9 := MustPod(t, "ns", "p", 5, ""), MustPod(t, "ns", "q", 9, "")
	tests := []struct {
		name      string
		events    []Event
		rv, floor uint64
		want      error
	}{
		{"floor above rv", nil, 4, 5, ErrRVRegression},
		{"event at the floor", []Event{ev(watch.Added, p5)}, 8, 5, ErrRVRegression},
		{"event above rv", []Event{ev(watch.Added, p9)}, 8, 1, ErrRVRegression},
		{"out of order", []Event{ev(watch.Added, p9), ev(watch.Added, p5)}, 9, 1, ErrRVRegression},
		{"bookmark", []Event{{Type: watch.Bookmark, RV: 5}}, 8, 1, ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := MustReadyCache(t, 10, []*Object{p5}, 5)
			if err := c.Restore(nil, tt.rv, tt.events, tt.floor); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if o, rv, _ := c.Get("ns", "p"); o != p5 || rv != 5 {
				t.Errorf("after a refused Restore: got %v at %d, want the previous state", o, rv)
			}
		})
	}
}
