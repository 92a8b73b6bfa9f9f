package versioncache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

// names lists the namespace/name of objs.
func names(objs []*Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Namespace + "/" + o.Name
	}
	return out
}

// MustPageAll pages through the state at rv with limit, following Next,
// and checks Remaining on every page.
func MustPageAll(t *testing.T, c *Cache, p Predicate, rv uint64, limit int64) []*Object {
	t.Helper()
	var out []*Object
	start := ""
	for pages := 0; ; pages++ {
		pg, err := c.ListPage(PageOptions{Predicate: p, RV: rv, Start: start, Limit: limit})
		if err != nil {
			t.Fatalf("page %d at rv %d: %v", pages, rv, err)
		}
		if rv != 0 && pg.RV != rv {
			t.Fatalf("page %d: got rv %d, want %d", pages, pg.RV, rv)
		}
		out = append(out, pg.Objects...)
		if pg.Next == "" {
			return out
		}
		if int64(len(pg.Objects)) > limit {
			t.Fatalf("page %d: got %d objects, want at most %d", pages, len(pg.Objects), limit)
		}
		start = pg.Next
	}
}

func TestListPageKeyOrder(t *testing.T) {
	// Storage keys sort "a-b/x" before "a/x" ('-' < '/').
	objs := []*Object{
		MustPod(t, "a", "x", 1, "web"), MustPod(t, "a-b", "x", 2, "web"),
		MustPod(t, "a", "y", 3, "db"), MustPod(t, "b", "x", 4, "web"),
	}
	c := MustReadyCache(t, 10, objs, 4)
	pg, err := c.ListPage(PageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a-b/x", "a/x", "a/y", "b/x"}
	if got := names(pg.Objects); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	list, _, _ := listAll(c, Predicate{Namespace: "a"})
	if got := names(list); !slices.Equal(got, []string{"a/x", "a/y"}) {
		t.Errorf("namespace a: got %v, want [a/x a/y]", got)
	}
}

func TestListPageLimit(t *testing.T) {
	objs := []*Object{
		MustPod(t, "a", "p1", 1, "web"), MustPod(t, "a", "p2", 2, "db"),
		MustPod(t, "a", "p3", 3, "web"), MustPod(t, "b", "p1", 4, "web"),
	}
	c := MustReadyCache(t, 10, objs, 9)
	tests := []struct {
		name          string
		opts          PageOptions
		want          []string
		wantNext      string
		wantRemaining int64
	}{
		{"first page all namespaces", PageOptions{Limit: 2}, []string{"a/p1", "a/p2"}, "a/p2\x00", 2},
		{"from a start key", PageOptions{Limit: 2, Start: "a/p2\x00"}, []string{"a/p3", "b/p1"}, "", 0},
		{"exact fit has no next", PageOptions{Limit: 4}, []string{"a/p1", "a/p2", "a/p3", "b/p1"}, "", 0},
		{"namespaced keys are names", PageOptions{Predicate: Predicate{Namespace: "a"}, Limit: 1, Start: "p1\x00"}, []string{"a/p2"}, "p2\x00", 1},
		{"selector counts every remaining object", PageOptions{Predicate: Predicate{Label: MustLabelSelector(t, "app=web")}, Limit: 1}, []string{"a/p1"}, "a/p1\x00", 3},
		{"selector skips to the limit", PageOptions{Predicate: Predicate{Label: MustLabelSelector(t, "app=web")}, Limit: 2}, []string{"a/p1", "a/p3"}, "a/p3\x00", 1},
		{"start past the end", PageOptions{Limit: 2, Start: "c/"}, []string{}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg, err := c.ListPage(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(pg.Objects); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if pg.Next != tt.wantNext || pg.Remaining != tt.wantRemaining {
				t.Errorf("got next %q remaining %d, want %q %d", pg.Next, pg.Remaining, tt.wantNext, tt.wantRemaining)
			}
			if pg.RV != 9 || pg.Objects == nil {
				t.Errorf("got rv %d objects nil=%v, want 9 and non-nil", pg.RV, pg.Objects == nil)
			}
		})
	}
}

func TestListPageErrors(t *testing.T) {
	c := New(podsGVR, 2)
	if _, err := c.ListPage(PageOptions{}); !errors.Is(err, ErrNotReady) {
		t.Errorf("before Replace: got %v, want ErrNotReady", err)
	}
	c.Replace(nil, 10)
	MustApply(t, c, 11, ev(watch.Added, MustPod(t, "a", "x", 11, "")))
	MustApply(t, c, 12, ev(watch.Added, MustPod(t, "a", "y", 12, "")))
	if _, err := c.ListPage(PageOptions{RV: 13}); !errors.Is(err, ErrFutureRV) {
		t.Errorf("rv 13: got %v, want ErrFutureRV", err)
	}
	if pg, err := c.ListPage(PageOptions{RV: 10}); err != nil || len(pg.Objects) != 0 {
		t.Errorf("rv 10 before eviction: got %v, %v; want an empty page", pg.Objects, err)
	}
	MustApply(t, c, 13, ev(watch.Added, MustPod(t, "a", "z", 13, "")))
	_, err := c.ListPage(PageOptions{RV: 10})
	if tooOld, ok := isTooOld(err); !ok || tooOld.Oldest != 11 {
		t.Errorf("rv 10 after eviction: got %v, want too old with oldest 11", err)
	}
	pg, err := c.ListPage(PageOptions{RV: 11})
	if err != nil || !slices.Equal(names(pg.Objects), []string{"a/x"}) {
		t.Errorf("rv 11: got %v, %v; want [a/x]", names(pg.Objects), err)
	}
}

// TestListPageHistory applies random changes, records the state after each
// batch, and checks that paging at every servable RV, with several limits
// and predicates, gives exactly the recorded state.
func TestListPageHistory(t *testing.T) {
	const (
		keys     = 12
		batches  = 60
		capacity = 40
	)
	rng := rand.New(rand.NewPCG(1, 2))
	c := MustReadyCache(t, capacity, nil, 1)
	history := map[uint64][]*Object{1: {}}
	live := map[string]*Object{}
	rv := uint64(1)
	for b := 0; b < batches; b++ {
		var events []Event
		for n := rng.IntN(3) + 1; n > 0; n-- {
			rv++
			ns, name := []string{"a", "a-b", "b"}[rng.IntN(3)], fmt.Sprintf("p%d", rng.IntN(keys))
			app := []string{"web", "db"}[rng.IntN(2)]
			key := ns + "/" + name
			o := MustPod(t, ns, name, rv, app)
			switch prev := live[key]; {
			case prev == nil:
				events, live[key] = append(events, ev(watch.Added, o)), o
			case rng.IntN(3) == 0:
				events = append(events, ev(watch.Deleted, MustPod(t, ns, name, rv, prev.Labels.Get("app"))))
				delete(live, key)
			default:
				events, live[key] = append(events, ev(watch.Modified, o)), o
			}
		}
		MustApply(t, c, rv, events...)
		all, _, err := listAll(c, Predicate{})
		if err != nil {
			t.Fatal(err)
		}
		history[rv] = all
	}
	preds := map[string]Predicate{
		"all":       {},
		"namespace": {Namespace: "a"},
		"label":     {Label: MustLabelSelector(t, "app=web")},
	}
	served, expired := 0, 0
	for at, want := range history {
		if _, err := c.ListPage(PageOptions{RV: at, Limit: 1}); err != nil {
			if _, tooOld := isTooOld(err); !tooOld {
				t.Fatalf("rv %d: %v", at, err)
			}
			expired++
			continue
		}
		served++
		for pname, p := range preds {
			for _, limit := range []int64{1, 3, 0} {
				got := names(MustPageAll(t, c, p, at, limit))
				var exp []string
				for _, o := range want {
					if p.Matches(o) {
						exp = append(exp, o.Namespace+"/"+o.Name)
					}
				}
				if !slices.Equal(got, exp) {
					t.Errorf("rv %d %s limit %d: got %v, want %v", at, pname, limit, got, exp)
				}
			}
		}
	}
	// The ring holds capacity events of about 2*batches: both kinds occur.
	if served < 10 || expired < 10 {
		t.Errorf("got %d served and %d expired RVs, want at least 10 of each", served, expired)
	}
}

func TestListPageRemainingAtPastRV(t *testing.T) {
	c := MustReadyCache(t, 10, []*Object{MustPod(t, "a", "p1", 1, ""), MustPod(t, "a", "p2", 2, "")}, 2)
	MustApply(t, c, 3, ev(watch.Added, MustPod(t, "a", "p0", 3, "")))
	MustApply(t, c, 4, ev(watch.Deleted, MustPod(t, "a", "p2", 4, "")))
	MustApply(t, c, 5, ev(watch.Added, MustPod(t, "a", "p3", 5, "")))
	pg, err := c.ListPage(PageOptions{RV: 2, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(pg.Objects); !slices.Equal(got, []string{"a/p1"}) || pg.Remaining != 1 || pg.Next != "a/p1\x00" {
		t.Errorf("got %v remaining %d next %q, want [a/p1] 1 %q", got, pg.Remaining, pg.Next, "a/p1\x00")
	}
	pg, err = c.ListPage(PageOptions{RV: 2, Limit: 1, Start: pg.Next})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(pg.Objects); !slices.Equal(got, []string{"a/p2"}) || pg.Next != "" {
		t.Errorf("got %v next %q, want [a/p2] and no next", got, pg.Next)
	}
}
