package versioncache

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// applyPods applies one Added event per RV in [from, to], one per batch.
func applyPods(t testing.TB, c *Cache, from, to uint64) {
	t.Helper()
	for rv := from; rv <= to; rv++ {
		MustApply(t, c, rv, ev(watch.Added, MustPod(t, "ns", fmt.Sprintf("p%d", rv), rv, "")))
	}
}

func TestRingWrap(t *testing.T) {
	c := MustReadyCache(t, 3, nil, 100)
	applyPods(t, c, 101, 107)
	var got []uint64
	for i := range c.ring.len() {
		got = append(got, c.ring.at(i).RV)
	}
	if want := []uint64{105, 106, 107}; !slices.Equal(got, want) {
		t.Errorf("got ring %v, want %v", got, want)
	}
	w := MustWatch(t, c, 104, false, Predicate{})
	if got, want := rvs(w.Initial()), []uint64{105, 106, 107}; !slices.Equal(got, want) {
		t.Errorf("got replay %v, want %v", got, want)
	}
	if list, _, _ := listAll(c, Predicate{}); len(list) != 7 {
		t.Errorf("got %d objects, want 7 (eviction drops events, not state)", len(list))
	}
}

func TestTooOldBoundary(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		applyTo  uint64 // events 101..applyTo after Replace at 100
		fromRV   uint64
		wantRVs  []uint64
		wantErr  string
	}{
		{"no events, from replace rv", 5, 100, 100, nil, ""},
		{"no events, one before", 5, 100, 99, nil, "too old resource version: 99 (100)"},
		{"before eviction, oldest-1", 5, 103, 100, []uint64{101, 102, 103}, ""},
		{"before eviction, oldest-2", 5, 103, 99, nil, "too old resource version: 99 (100)"},
		{"before eviction, mid ring", 5, 103, 102, []uint64{103}, ""},
		{"full ring not yet evicted", 3, 103, 100, []uint64{101, 102, 103}, ""},
		{"after eviction, oldest-1", 3, 105, 102, []uint64{103, 104, 105}, ""},
		{"after eviction, oldest-2", 3, 105, 101, nil, "too old resource version: 101 (102)"},
		{"after eviction, replace rv", 3, 105, 100, nil, "too old resource version: 100 (102)"},
		{"after eviction, zero", 3, 105, 0, nil, "too old resource version: 0 (102)"},
		{"after eviction, at cache rv", 3, 105, 105, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := MustReadyCache(t, tt.capacity, nil, 100)
			applyPods(t, c, 101, tt.applyTo)
			w, err := c.Watch(tt.fromRV, false, Predicate{})
			if tt.wantErr != "" {
				too, ok := isTooOld(err)
				if !ok {
					t.Fatalf("got %v, want TooOldError %q", err, tt.wantErr)
				}
				if too.Error() != tt.wantErr || too.Requested != tt.fromRV {
					t.Errorf("got %q (requested %d), want %q", too.Error(), too.Requested, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want a watch", err)
			}
			defer w.Stop()
			if got := rvs(w.Initial()); !slices.Equal(got, tt.wantRVs) {
				t.Errorf("got replay %v, want %v", got, tt.wantRVs)
			}
			if w.StartRV() != tt.applyTo {
				t.Errorf("got StartRV %d, want %d", w.StartRV(), tt.applyTo)
			}
		})
	}
}

func TestWatchFromFutureRV(t *testing.T) {
	c := MustReadyCache(t, 10, nil, 100)
	applyPods(t, c, 101, 102)
	w := MustWatch(t, c, 105, false, Predicate{})
	if len(w.Initial()) != 0 || w.StartRV() != 102 {
		t.Errorf("got replay %v start %d, want none at 102", summary(w.Initial()), w.StartRV())
	}
	applyPods(t, c, 103, 105)
	MustApply(t, c, 105) // no advance, no marker
	applyPods(t, c, 106, 107)
	MustApply(t, c, 108)
	if got, want := rvs(drain(w)), []uint64{106, 107, 108}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSendStateWatch(t *testing.T) {
	objs := []*Object{MustPod(t, "b", "y", 5, "web"), MustPod(t, "a", "z", 7, "web"), MustPod(t, "a", "x", 9, "db")}
	c := MustReadyCache(t, 10, objs, 50)
	applyPods(t, c, 51, 52)
	w := MustWatch(t, c, 0, true, Predicate{Label: MustLabelSelector(t, "app=web")})
	if got, want := summary(w.Initial()), []string{"ADDED z 7", "ADDED y 5"}; !slices.Equal(got, want) {
		t.Errorf("got initial %v, want %v", got, want)
	}
	if w.StartRV() != 52 {
		t.Errorf("got StartRV %d, want 52", w.StartRV())
	}
	MustApply(t, c, 53, ev(watch.Added, MustPod(t, "c", "n", 53, "web")))
	if got, want := summary(drain(w)), []string{"ADDED n 53"}; !slices.Equal(got, want) {
		t.Errorf("got live %v, want %v", got, want)
	}
}

// TestReplayThenLive starts watchers at every point while another
// goroutine applies events and checks each sees every RV after its start
// exactly once, in order.
func TestReplayThenLive(t *testing.T) {
	const (
		replaceRV = 1000
		events    = 90 // no watcher can overflow its buffer (maxWatcherBuffer)
	)
	c := MustReadyCache(t, DefaultCapacity, nil, replaceRV)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for rv := uint64(replaceRV + 1); rv <= replaceRV+events; rv++ {
			name := fmt.Sprintf("p%d", rv%7) // Added then Modified: exercise Prev
			if err := c.Apply([]Event{{Type: watch.Modified, Object: MustPod(t, "ns", name, rv, "")}}, rv); err != nil {
				t.Errorf("Apply %d: %v", rv, err)
				return
			}
		}
	}()
	type started struct {
		w    *Watcher
		from uint64
	}
	var ws []started
	for i := 0; ; i++ {
		cur := c.RV()
		from := replaceRV + uint64(i)%(cur-replaceRV+1)
		ws = append(ws, started{MustWatch(t, c, from, false, Predicate{}), from})
		ws = append(ws, started{MustWatch(t, c, 0, true, Predicate{}), 0})
		if cur == replaceRV+events {
			break
		}
	}
	<-done
	final, _, _ := listAll(c, Predicate{})
	for i, s := range ws {
		if s.from == 0 {
			checkStateThenLive(t, i, s.w, final)
			continue
		}
		got := rvs(append(slices.Clone(s.w.Initial()), drain(s.w)...))
		var want []uint64
		for rv := s.from + 1; rv <= replaceRV+events; rv++ {
			want = append(want, rv)
		}
		if !slices.Equal(got, want) {
			t.Errorf("watcher %d from %d: got %v, want %v", i, s.from, got, want)
		}
	}
}

// checkStateThenLive rebuilds the state from a sendState watcher's events
// and compares it with the final list.
func checkStateThenLive(t *testing.T, i int, w *Watcher, final []*Object) {
	t.Helper()
	got := map[string]uint64{}
	for _, e := range w.Initial() {
		got[e.Object.Name] = e.RV
	}
	last := w.StartRV()
	for _, e := range drain(w) {
		if e.RV <= last {
			t.Errorf("watcher %d: got RV %d after %d, want strictly increasing", i, e.RV, last)
		}
		last = e.RV
		got[e.Object.Name] = e.RV
	}
	want := map[string]uint64{}
	for _, o := range final {
		want[o.Name] = o.RV
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("watcher %d: got state %v, want %v", i, got, want)
	}
}

func TestSelectorTransitions(t *testing.T) {
	p := func(rv uint64, app string) *Object { return MustPod(t, "ns", "a", rv, app) }
	c := MustReadyCache(t, 20, nil, 10)
	w := MustWatch(t, c, 10, false, Predicate{Label: MustLabelSelector(t, "app=web")})
	steps := []struct {
		name string
		in   Event
		want string // "" for skipped
	}{
		{"added, not matching", ev(watch.Added, p(11, "db")), ""},
		{"modified, starts matching", ev(watch.Modified, p(12, "web")), "ADDED a 12 web"},
		{"modified, still matching", ev(watch.Modified, p(13, "web")), "MODIFIED a 13 web"},
		{"modified, stops matching", ev(watch.Modified, p(14, "db")), "DELETED a 14 web"},
		{"modified, neither", ev(watch.Modified, p(15, "db")), ""},
		{"deleted, not matching", ev(watch.Deleted, p(16, "db")), ""},
		{"added, matching", ev(watch.Added, p(17, "web")), "ADDED a 17 web"},
		{"deleted, matching", ev(watch.Deleted, p(18, "web")), "DELETED a 18 web"},
		{"modified without prev, matching", ev(watch.Modified, p(19, "web")), "ADDED a 19 web"},
	}
	for _, s := range steps {
		MustApply(t, c, s.in.RV, s.in)
		got := drain(w)
		var gotS []string
		for _, e := range got {
			gotS = append(gotS, fmt.Sprintf("%s %s %d %s", e.Type, e.Object.Name, e.RV, e.Object.Labels.Get("app")))
			if e.Object.RV != e.RV {
				t.Errorf("%s: got object RV %d, want event RV %d", s.name, e.Object.RV, e.RV)
			}
			if back := MustNewObject(t, e.Object.Raw); back.RV != e.RV {
				t.Errorf("%s: got Raw RV %d, want %d", s.name, back.RV, e.RV)
			}
		}
		var want []string
		if s.want != "" {
			want = []string{s.want}
		}
		if !slices.Equal(gotS, want) {
			t.Errorf("%s: got %v, want %v", s.name, gotS, want)
		}
	}
	// The replay applies the same transitions.
	w2 := MustWatch(t, c, 10, false, Predicate{Label: MustLabelSelector(t, "app=web")})
	if got, want := summary(w2.Initial()), []string{"ADDED a 12", "MODIFIED a 13", "DELETED a 14", "ADDED a 17", "DELETED a 18", "ADDED a 19"}; !slices.Equal(got, want) {
		t.Errorf("replay: got %v, want %v", got, want)
	}
}

func TestFieldAndNamespaceFilter(t *testing.T) {
	node := func(ns, name string, rv uint64, node string) *Object {
		return MustNewObject(t, podJSON(ns, name, rv, "", node))
	}
	c := MustReadyCache(t, 20, nil, 10)
	byNode := MustWatch(t, c, 10, false, Predicate{Field: fields.OneTermEqualSelector("spec.nodeName", "n1")})
	byNS := MustWatch(t, c, 10, false, Predicate{Namespace: "kube-system"})
	both := MustWatch(t, c, 10, false, Predicate{Namespace: "kube-system", Field: fields.OneTermEqualSelector("spec.nodeName", "n1")})
	MustApply(t, c, 14,
		ev(watch.Added, node("default", "a", 11, "")),
		ev(watch.Modified, node("default", "a", 12, "n1")), // scheduled onto n1
		ev(watch.Added, node("kube-system", "b", 13, "n2")),
		ev(watch.Modified, node("kube-system", "b", 14, "n1")),
	)
	tests := []struct {
		name string
		w    *Watcher
		want []string
	}{
		{"node", byNode, []string{"ADDED a 12", "ADDED b 14"}},
		{"namespace", byNS, []string{"ADDED b 13", "MODIFIED b 14"}},
		{"namespace and node", both, []string{"ADDED b 14"}},
	}
	for _, tt := range tests {
		if got := summary(drain(tt.w)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// testBuffer (events) is the watcher buffer of the eviction tests' caches,
// whose ring is larger.
const testBuffer = 50

func TestSlowWatcherEviction(t *testing.T) {
	const total = 3 * testBuffer
	c := MustReadyCache(t, DefaultCapacity, nil, 0)
	c.buffer = testBuffer
	slow := MustWatch(t, c, 0, false, Predicate{})
	fast := MustWatch(t, c, 0, false, Predicate{})
	var got []uint64
	for rv := uint64(1); rv <= total; rv++ {
		// Apply returns although slow never reads.
		applyPods(t, c, rv, rv)
		got = append(got, rvs(drain(fast))...)
	}
	if len(got) != total || got[total-1] != total || fast.Evicted() {
		t.Errorf("fast: got %d events ending %d (evicted %v), want %d ending %d", len(got), got[len(got)-1], fast.Evicted(), total, total)
	}
	if !slow.Evicted() {
		t.Fatalf("slow: got not evicted, want evicted")
	}
	queued := drain(slow)
	if len(queued) != testBuffer || queued[len(queued)-1].RV != testBuffer {
		t.Errorf("slow: got %d queued events, want the first %d", len(queued), testBuffer)
	}
	if !isClosed(slow) {
		t.Errorf("slow: got open channel, want closed")
	}
	c.watchMu.Lock()
	n := len(c.watchers)
	c.watchMu.Unlock()
	if n != 1 {
		t.Errorf("got %d registered watchers, want 1", n)
	}
	slow.Stop() // idempotent after eviction
}

func TestFullBufferDropsProgressMarkers(t *testing.T) {
	c := MustReadyCache(t, DefaultCapacity, nil, 0)
	c.buffer = testBuffer
	w := MustWatch(t, c, 0, false, Predicate{})
	applyPods(t, c, 1, testBuffer)
	MustApply(t, c, testBuffer+5) // marker dropped, watcher kept
	if w.Evicted() {
		t.Fatalf("got evicted by a progress marker, want kept")
	}
	applyPods(t, c, testBuffer+6, testBuffer+6)
	if !w.Evicted() {
		t.Errorf("got kept after an event overflowed, want evicted")
	}
	if got := drain(w); len(got) != testBuffer || got[len(got)-1].Type != watch.Added {
		t.Errorf("got %d events, want %d object events", len(got), testBuffer)
	}
}

// A burst as large as a cloud commit batch or a relist's changes, arriving
// while the client is busy writing, does not evict a healthy watcher: its
// buffer holds as many events as the ring, and never fewer than
// minWatcherBuffer.
func TestBurstDoesNotEvictWatcher(t *testing.T) {
	const burst = 500 // above the sync's largest commit batch
	c := MustReadyCache(t, DefaultCapacity, nil, 0)
	w := MustWatch(t, c, 0, false, Predicate{})
	batch := make([]Event, burst)
	for i := range batch {
		batch[i] = ev(watch.Added, MustPod(t, "ns", fmt.Sprintf("p%d", i), uint64(i+1), ""))
	}
	MustApply(t, c, burst, batch...)
	if got := drain(w); w.Evicted() || len(got) != burst {
		t.Errorf("got %d of %d events (evicted %v), want all, not evicted", len(got), burst, w.Evicted())
	}
	if small := New(podsGVR, 10); small.buffer != minWatcherBuffer {
		t.Errorf("buffer of a 10-event cache: got %d, want the floor %d", small.buffer, minWatcherBuffer)
	}
}

func TestManyWatchersShareFrames(t *testing.T) {
	const watchers = 1000
	old := MustPod(t, "ns", "a", 5, "web")
	c := MustReadyCache(t, 10, []*Object{old}, 10)
	all := make([]*Watcher, watchers)
	for i := range all {
		p := Predicate{}
		if i%2 == 1 {
			p.Label = MustLabelSelector(t, "app=web")
		}
		all[i] = MustWatch(t, c, 0, true, p)
	}
	MustApply(t, c, 11, ev(watch.Modified, MustPod(t, "ns", "a", 11, "db")))
	MustApply(t, c, 12, ev(watch.Modified, MustPod(t, "ns", "a", 12, "web")))
	want := map[string][]byte{} // first frame seen per position and watcher kind
	for i, w := range all {
		got := append(slices.Clone(w.Initial()), drain(w)...)
		wantTypes := []string{"ADDED a 5", "MODIFIED a 11", "MODIFIED a 12"}
		if i%2 == 1 {
			wantTypes = []string{"ADDED a 5", "DELETED a 11", "ADDED a 12"}
		}
		if !slices.Equal(summary(got), wantTypes) {
			t.Fatalf("watcher %d: got %v, want %v", i, summary(got), wantTypes)
		}
		for j, e := range got {
			f := e.Frame(e.Type)
			key := fmt.Sprintf("%d/%d", i%2, j)
			first, seen := want[key]
			if !seen {
				want[key] = f
				continue
			}
			if !bytes.Equal(f, first) {
				t.Fatalf("watcher %d event %d: got frame %s, want %s", i, j, f, first)
			}
			if j > 0 && &f[0] != &first[0] { // live events share; initial ones are encoded per watcher
				t.Fatalf("watcher %d event %d: got a separate encoding, want shared bytes", i, j)
			}
		}
	}
	// At RV 11 the unfiltered watchers get the new object as MODIFIED, the
	// app=web ones the previous object (app=web) at RV 11 as DELETED.
	modified, deleted := want["0/1"], want["1/1"]
	if !bytes.Contains(modified, MustPod(t, "ns", "a", 11, "db").Raw) {
		t.Errorf("got %s, want the MODIFIED frame of a at 11", modified)
	}
	if wantObj := MustPod(t, "ns", "a", 11, "web").Raw; !bytes.Equal(deleted, []byte(`{"type":"DELETED","object":`+string(wantObj)+"}\n")) {
		t.Errorf("got %s, want the DELETED frame of the previous a at 11", deleted)
	}
}

func TestFrame(t *testing.T) {
	o := MustPod(t, "ns", "a", 7, "")
	tests := []struct {
		name string
		e    Event
		t    watch.EventType
		want string
	}{
		{"object", Event{Type: watch.Added, RV: 7, Object: o}, watch.Added, `{"type":"ADDED","object":` + string(o.Raw) + "}\n"},
		{"other type", Event{Type: watch.Added, RV: 7, Object: o}, watch.Deleted, `{"type":"DELETED","object":` + string(o.Raw) + "}\n"},
		{"progress marker", Event{Type: watch.Bookmark, RV: 9}, watch.Bookmark, `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}` + "\n"},
		{"empty raw", Event{Type: watch.Added, Object: &Object{}}, watch.Added, `{"type":"ADDED","object":null}` + "\n"},
		{"odd type quoted", Event{Type: `X"Y`, Object: o}, `X"Y`, `{"type":"X\"Y","object":` + string(o.Raw) + "}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.e.Frame(tt.t)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestFrameCacheFollowsEdits(t *testing.T) {
	c := MustReadyCache(t, 10, nil, 10)
	w := MustWatch(t, c, 10, false, Predicate{})
	MustApply(t, c, 11, ev(watch.Added, MustPod(t, "ns", "a", 11, "")))
	e := drain(w)[0]
	_ = e.Frame(watch.Added)
	other := MustPod(t, "ns", "b", 11, "")
	e.Object = other
	if got := e.Frame(watch.Added); !bytes.Contains(got, []byte(`"name":"b"`)) {
		t.Errorf("got %s after changing Object, want b's frame", got)
	}
}

func TestStopRaces(t *testing.T) {
	c := New(podsGVR, 50)
	c.Replace(nil, 0)
	var wg sync.WaitGroup
	ws := make([]*Watcher, 200)
	for i := range ws {
		ws[i] = MustWatch(t, c, 0, i%2 == 0, Predicate{})
	}
	wg.Go(func() {
		for rv := uint64(1); rv <= 300; rv++ {
			if err := c.Apply([]Event{ev(watch.Added, MustPod(t, "ns", "p", rv, ""))}, rv); err != nil {
				t.Errorf("Apply: %v", err)
			}
		}
		c.Close()
	})
	for _, w := range ws {
		wg.Go(func() {
			for range 2 {
				w.Stop()
			}
		})
		wg.Go(func() {
			for range w.Events() {
			}
		})
	}
	wg.Wait()
	for i, w := range ws {
		if !isClosed(w) {
			t.Errorf("watcher %d: got open channel, want closed", i)
		}
	}
	if len(c.watchers) != 0 {
		t.Errorf("got %d registered watchers, want 0", len(c.watchers))
	}
}

// A relist diff's deletes share the list RV. A watch resuming at that RV
// replays the whole group, since its client may have seen only part of it.
// Once eviction splits the group, resuming at its RV could miss evicted
// members, so it gets 410.
func TestSharedRVGroup(t *testing.T) {
	c := MustReadyCache(t, 3, []*Object{MustPod(t, "ns", "a", 90, ""), MustPod(t, "ns", "b", 91, "")}, 100)
	MustApply(t, c, 110,
		ev(watch.Deleted, MustPod(t, "ns", "a", 110, "")),
		ev(watch.Deleted, MustPod(t, "ns", "b", 110, "")))
	w := MustWatch(t, c, 100, false, Predicate{})
	if got, want := summary(w.Initial()), 2; len(got) != want {
		t.Errorf("from 100: got replay %v, want %d deletes", got, want)
	}
	w.Stop()
	w = MustWatch(t, c, 110, false, Predicate{})
	if got := rvs(w.Initial()); !slices.Equal(got, []uint64{110, 110}) {
		t.Errorf("from the group's RV: got replay %v, want the whole group [110 110]", got)
	}
	w.Stop()
	MustApply(t, c, 111, ev(watch.Added, MustPod(t, "ns", "c", 111, "")))
	w = MustWatch(t, c, 111, false, Predicate{})
	if got := rvs(w.Initial()); len(got) != 0 {
		t.Errorf("from 111: got replay %v, want none (a single event is not a group)", got)
	}
	w.Stop()
	MustApply(t, c, 112, ev(watch.Added, MustPod(t, "ns", "d", 112, "")))
	for _, from := range []uint64{109, 110} {
		_, err := c.Watch(from, false, Predicate{})
		if too, ok := isTooOld(err); !ok || too.Oldest != 111 {
			t.Errorf("from %d after the group was split: got %v, want too old with oldest 111", from, err)
		}
	}
	w = MustWatch(t, c, 111, false, Predicate{})
	defer w.Stop()
	if got := rvs(w.Initial()); !slices.Equal(got, []uint64{112}) {
		t.Errorf("from 111: got replay %v, want [112]", got)
	}
}
