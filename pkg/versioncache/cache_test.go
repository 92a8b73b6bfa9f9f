package versioncache

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

func TestNotReady(t *testing.T) {
	c := New(podsGVR, 0)
	defer c.Close()
	if c.capacity != DefaultCapacity {
		t.Errorf("got capacity %d, want %d", c.capacity, DefaultCapacity)
	}
	if c.Ready() {
		t.Errorf("got ready before Replace, want not ready")
	}
	if c.GVR() != podsGVR {
		t.Errorf("got GVR %v, want %v", c.GVR(), podsGVR)
	}
	checks := map[string]error{}
	_, _, checks["Get"] = c.Get("ns", "a")
	_, _, checks["List"] = listAll(c, Predicate{})
	_, checks["Watch"] = c.Watch(0, true, Predicate{})
	checks["Apply"] = c.Apply([]Event{ev(watch.Added, MustPod(t, "ns", "a", 1, ""))}, 1)
	for name, err := range checks {
		if !errors.Is(err, ErrNotReady) {
			t.Errorf("%s: got %v, want ErrNotReady", name, err)
		}
	}
}

func TestInfo(t *testing.T) {
	c := New(podsGVR, 10)
	if _, ok := c.Info(); ok {
		t.Errorf("got info before SetInfo, want none")
	}
	in := metav1.APIResource{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "list"}}
	c.SetInfo(in)
	in.Verbs[0] = "changed"
	got, ok := c.Info()
	if !ok || got.Kind != "Pod" || got.Verbs[0] != "get" {
		t.Fatalf("got %+v, %v; want pods info with verbs [get list]", got, ok)
	}
	got.Verbs[1] = "changed"
	if again, _ := c.Info(); again.Verbs[1] != "list" {
		t.Errorf("got verbs %v after editing a returned copy, want [get list]", again.Verbs)
	}
}

func TestReplaceGetList(t *testing.T) {
	objs := []*Object{
		MustPod(t, "b", "x", 3, "web"),
		MustPod(t, "a", "z", 5, "db"),
		nil,
		MustPod(t, "a", "y", 4, "web"),
		MustPod(t, "b", "x", 6, "db"), // same key as the first: the later wins
	}
	c := MustReadyCache(t, 10, objs, 100)
	if !c.Ready() || c.RV() != 100 {
		t.Fatalf("got ready %v RV %d, want ready at 100", c.Ready(), c.RV())
	}
	o, rv, err := c.Get("b", "x")
	if err != nil || o == nil || o.RV != 6 || rv != 100 {
		t.Errorf("Get(b, x): got %v, %d, %v; want RV 6 at 100", o, rv, err)
	}
	o, rv, err = c.Get("b", "missing")
	if err != nil || o != nil || rv != 100 {
		t.Errorf("Get(b, missing): got %v, %d, %v; want nil at 100", o, rv, err)
	}
	tests := []struct {
		name string
		p    Predicate
		want []string
	}{
		{"all sorted", Predicate{}, []string{"a/y", "a/z", "b/x"}},
		{"namespace", Predicate{Namespace: "a"}, []string{"a/y", "a/z"}},
		{"empty namespace", Predicate{Namespace: "c"}, []string{}},
		{"label", Predicate{Label: MustLabelSelector(t, "app=db")}, []string{"a/z", "b/x"}},
		{"namespace and label", Predicate{Namespace: "b", Label: MustLabelSelector(t, "app=web")}, []string{}},
		{"field", Predicate{Field: fields.OneTermEqualSelector("metadata.name", "y")}, []string{"a/y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, rv, err := listAll(c, tt.p)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if list == nil {
				t.Errorf("got nil slice, want non-nil")
			}
			got := []string{}
			for _, o := range list {
				got = append(got, o.Namespace+"/"+o.Name)
			}
			if !slices.Equal(got, tt.want) || rv != 100 {
				t.Errorf("got %v at %d, want %v at 100", got, rv, tt.want)
			}
		})
	}
}

func TestListDoesNotAlias(t *testing.T) {
	c := MustReadyCache(t, 10, []*Object{MustPod(t, "a", "x", 1, ""), MustPod(t, "a", "y", 2, "")}, 2)
	list, _, _ := listAll(c, Predicate{})
	list[0] = nil
	again, _, _ := listAll(c, Predicate{})
	if again[0] == nil || again[0].Name != "x" {
		t.Errorf("got %v after editing a returned list, want x first", again[0])
	}
}

func TestApplyUpdatesStateAndPrev(t *testing.T) {
	a1 := MustPod(t, "ns", "a", 11, "v1")
	c := MustReadyCache(t, 10, nil, 10)
	w := MustWatch(t, c, 10, false, Predicate{})
	a2 := MustPod(t, "ns", "a", 12, "v2")
	b := MustPod(t, "ns", "b", 13, "")
	aGone := MustPod(t, "ns", "a", 14, "v2")
	MustApply(t, c, 14, ev(watch.Added, a1), ev(watch.Modified, a2), Event{Type: watch.Added, Object: b}, ev(watch.Deleted, aGone))
	got := drain(w)
	want := []string{"ADDED a 11", "MODIFIED a 12", "ADDED b 13", "DELETED a 14"}
	if !slices.Equal(summary(got), want) {
		t.Fatalf("got %v, want %v", summary(got), want)
	}
	wantPrev := []*Object{nil, a1, nil, a2}
	for i, e := range got {
		if e.Prev != wantPrev[i] {
			t.Errorf("event %d: got Prev %v, want %v", i, e.Prev, wantPrev[i])
		}
	}
	if o, rv, _ := c.Get("ns", "a"); o != nil || rv != 14 {
		t.Errorf("got %v at %d, want a deleted at 14", o, rv)
	}
	if o, _, _ := c.Get("ns", "b"); o != b {
		t.Errorf("got %v, want b", o)
	}
}

func TestApplyValidation(t *testing.T) {
	a := func(rv uint64) Event { return ev(watch.Added, MustPod(t, "ns", "x", rv, "")) }
	tests := []struct {
		name    string
		events  []Event
		rv      uint64
		wantErr error
	}{
		{"event at cache rv", []Event{a(10)}, 10, ErrRVRegression},
		{"event below cache rv", []Event{a(5)}, 10, ErrRVRegression},
		{"events out of order", []Event{a(12), a(11)}, 12, ErrRVRegression},
		{"batch rv below last event", []Event{a(11), a(12)}, 11, ErrRVRegression},
		{"batch rv below cache rv", nil, 9, ErrRVRegression},
		{"nil object", []Event{a(11), {Type: watch.Added, RV: 12}}, 12, ErrInvalidEvent},
		{"bookmark event", []Event{{Type: watch.Bookmark, RV: 11}}, 11, ErrInvalidEvent},
		{"error event", []Event{{Type: watch.Error, Object: MustPod(t, "ns", "x", 11, "")}}, 11, ErrInvalidEvent},
		{"rv differs from object", []Event{{Type: watch.Added, RV: 12, Object: MustPod(t, "ns", "x", 11, "")}}, 12, ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep := MustPod(t, "ns", "x", 3, "")
			c := MustReadyCache(t, 10, []*Object{keep}, 10)
			w := MustWatch(t, c, 10, false, Predicate{})
			err := c.Apply(tt.events, tt.rv)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
			if got := c.RV(); got != 10 {
				t.Errorf("got RV %d, want 10", got)
			}
			if o, _, _ := c.Get("ns", "x"); o != keep {
				t.Errorf("got %v, want the replaced object", o)
			}
			if got := drain(w); len(got) != 0 {
				t.Errorf("got events %v, want none", summary(got))
			}
			if c.ring.len() != 0 {
				t.Errorf("got %d ring events, want 0", c.ring.len())
			}
		})
	}
}

func TestProgressMarkers(t *testing.T) {
	c := MustReadyCache(t, 10, nil, 10)
	w := MustWatch(t, c, 10, false, Predicate{Namespace: "other"})
	steps := []struct {
		name   string
		events []Event
		rv     uint64
		want   []string
		wantRV uint64
	}{
		{"empty batch at cache rv", nil, 10, nil, 10},
		{"empty batch advances", nil, 15, []string{"BOOKMARK - 15"}, 15},
		{"events up to rv", []Event{ev(watch.Added, MustPod(t, "other", "a", 16, ""))}, 16, []string{"ADDED a 16"}, 16},
		{"events then progress", []Event{ev(watch.Added, MustPod(t, "other", "b", 17, ""))}, 20, []string{"ADDED b 17", "BOOKMARK - 20"}, 20},
		{"filtered event still progresses", []Event{ev(watch.Added, MustPod(t, "ns", "c", 21, ""))}, 22, []string{"BOOKMARK - 22"}, 22},
	}
	for _, s := range steps {
		MustApply(t, c, s.rv, s.events...)
		if got := summary(drain(w)); !slices.Equal(got, s.want) {
			t.Errorf("%s: got %v, want %v", s.name, got, s.want)
		}
		if got := c.RV(); got != s.wantRV {
			t.Errorf("%s: got RV %d, want %d", s.name, got, s.wantRV)
		}
	}
	// Progress markers are not events: a watch from before them replays
	// only the object events.
	w2 := MustWatch(t, c, 10, false, Predicate{})
	if got, want := summary(w2.Initial()), []string{"ADDED a 16", "ADDED b 17", "ADDED c 21"}; !slices.Equal(got, want) {
		t.Errorf("got replay %v, want %v", got, want)
	}
}

func TestWaitForRV(t *testing.T) {
	t.Run("already reached", func(t *testing.T) {
		c := MustReadyCache(t, 10, nil, 10)
		if err := c.WaitForRV(context.Background(), 10); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})
	t.Run("reached by apply", func(t *testing.T) {
		c := MustReadyCache(t, 10, nil, 10)
		done := make(chan error, 1)
		go func() { done <- c.WaitForRV(context.Background(), 13) }()
		MustApply(t, c, 12)
		MustApply(t, c, 13)
		if err := <-done; err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})
	t.Run("reached by replace", func(t *testing.T) {
		c := New(podsGVR, 10)
		defer c.Close()
		done := make(chan error, 1)
		go func() { done <- c.WaitForRV(context.Background(), 0) }()
		c.Replace(nil, 5)
		if err := <-done; err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		c := MustReadyCache(t, 10, nil, 10)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.WaitForRV(ctx, 11) }()
		MustApply(t, c, 10) // no advance
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		c := MustReadyCache(t, 10, nil, 10)
		done := make(chan error, 1)
		go func() { done <- c.WaitForRV(context.Background(), 11) }()
		c.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	})
}

func TestCloseEndsWatchers(t *testing.T) {
	c := MustReadyCache(t, 10, nil, 10)
	ws := []*Watcher{MustWatch(t, c, 10, false, Predicate{}), MustWatch(t, c, 0, true, Predicate{})}
	c.Close()
	for i, w := range ws {
		if !isClosed(w) {
			t.Errorf("watcher %d: got open channel, want closed", i)
		}
		if w.Evicted() {
			t.Errorf("watcher %d: got evicted, want a plain close", i)
		}
		w.Stop() // idempotent after Close
	}
	if _, err := c.Watch(10, false, Predicate{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch: got %v, want ErrClosed", err)
	}
	if err := c.Apply([]Event{ev(watch.Added, MustPod(t, "ns", "a", 11, ""))}, 11); err != nil {
		t.Errorf("Apply: got %v, want nil", err)
	}
	if c.RV() != 10 {
		t.Errorf("got RV %d after Apply on a closed cache, want 10", c.RV())
	}
	c.Close()
}

func TestReplaceClosesWatchers(t *testing.T) {
	c := MustReadyCache(t, 10, nil, 10)
	w := MustWatch(t, c, 10, false, Predicate{})
	MustApply(t, c, 11, ev(watch.Added, MustPod(t, "ns", "a", 11, "")))
	c.Replace([]*Object{MustPod(t, "ns", "b", 20, "")}, 20)
	if got := summary(drain(w)); !slices.Equal(got, []string{"ADDED a 11"}) {
		t.Errorf("got %v, want the event queued before Replace", got)
	}
	if !isClosed(w) || w.Evicted() {
		t.Errorf("got closed %v evicted %v, want closed and not evicted", isClosed(w), w.Evicted())
	}
	if _, err := c.Watch(11, false, Predicate{}); err == nil {
		t.Errorf("got a watch from before the Replace RV, want TooOldError")
	}
	if w2 := MustWatch(t, c, 20, false, Predicate{}); len(w2.Initial()) != 0 {
		t.Errorf("got replay %v after Replace, want none", summary(w2.Initial()))
	}
}
