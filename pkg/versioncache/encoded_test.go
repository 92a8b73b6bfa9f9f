package versioncache

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"k8s.io/apimachinery/pkg/watch"
)

// Encoded runs encode once per key, from any number of goroutines, and
// returns the same bytes (or error) to every caller.
func TestObjectEncoded(t *testing.T) {
	o := MustPod(t, "default", "a", 5, "web")
	var calls atomic.Int32
	encode := func(raw []byte) ([]byte, error) {
		calls.Add(1)
		return append([]byte("pb:"), raw...), nil
	}
	results := make([][]byte, 16)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := o.Encoded("pb", encode)
			if err != nil {
				t.Errorf("Encoded: %v", err)
			}
			results[i] = b
		}()
	}
	wg.Wait()
	if got := calls.Load(); got != 1 {
		t.Errorf("got %d encodes, want 1", got)
	}
	for i, b := range results {
		if string(b) != "pb:"+string(o.Raw) || &b[0] != &results[0][0] {
			t.Errorf("result %d: got %q, want the one shared encoding", i, b)
		}
	}

	// Keys are separate, errors are cached too.
	boom := errors.New("boom")
	for range 2 {
		if _, err := o.Encoded("other", func([]byte) ([]byte, error) { calls.Add(1); return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("got error %v, want %v", err, boom)
		}
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("got %d encodes, want 2", got)
	}

	// A copy with a new RV has new bytes, so it encodes again.
	c, err := o.WithRV(9)
	if err != nil {
		t.Fatalf("WithRV: %v", err)
	}
	b, _ := c.Encoded("pb", encode)
	if got := calls.Load(); got != 3 || string(b) != "pb:"+string(c.Raw) {
		t.Errorf("got %q after %d encodes, want the new Raw's encoding after 3", b, got)
	}

	// An Object built by hand does not cache.
	lit := &Object{Name: "x", RV: 1, Raw: []byte("{}")}
	for range 2 {
		_, _ = lit.Encoded("pb", encode)
	}
	if got := calls.Load(); got != 5 {
		t.Errorf("got %d encodes, want 5", got)
	}
}

// EncodedFrame encodes each event type once per applied event and shares
// the bytes between watchers; caller-built events do not cache.
func TestEventEncodedFrame(t *testing.T) {
	c := MustReadyCache(t, 16, []*Object{MustPod(t, "default", "a", 5, "web")}, 5)
	w1 := MustWatch(t, c, 5, false, Predicate{})
	w2 := MustWatch(t, c, 5, false, Predicate{})
	MustApply(t, c, 6, ev(watch.Modified, MustPod(t, "default", "a", 6, "web")))
	var calls atomic.Int32
	encode := func() ([]byte, error) { calls.Add(1); return []byte("frame"), nil }
	e1, e2 := MustReceive(t, w1), MustReceive(t, w2)
	b1, _ := e1.EncodedFrame("pb", watch.Modified, encode)
	b2, _ := e2.EncodedFrame("pb", watch.Modified, encode)
	if calls.Load() != 1 || &b1[0] != &b2[0] {
		t.Errorf("got %d encodes, want 1 shared frame", calls.Load())
	}
	_, _ = e1.EncodedFrame("pb", watch.Added, encode)
	if calls.Load() != 2 {
		t.Errorf("got %d encodes, want a second one for another type", calls.Load())
	}
	edited := e1
	edited.RV = 99
	_, _ = edited.EncodedFrame("pb", watch.Modified, encode)
	built := Event{Type: watch.Modified, RV: 6, Object: e1.Object}
	_, _ = built.EncodedFrame("pb", watch.Modified, encode)
	if calls.Load() != 4 {
		t.Errorf("got %d encodes, want edited and caller-built events encoded afresh", calls.Load())
	}
}

// A cached encoding keeps no spare capacity from its encoder's buffer.
func TestEncodedExactSize(t *testing.T) {
	tests := []struct {
		name string
		out  []byte
	}{
		{name: "spare capacity", out: append(make([]byte, 0, 4096), "pb:abc"...)},
		{name: "exact", out: []byte("pb:abc")},
		{name: "empty", out: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := MustPod(t, "default", "a", 5, "web")
			b, err := o.Encoded("pb", func([]byte) ([]byte, error) { return tt.out, nil })
			if err != nil {
				t.Fatalf("Encoded: %v", err)
			}
			if string(b) != string(tt.out) || cap(b) != len(b) {
				t.Errorf("got %q with cap %d, want %q with cap %d", b, cap(b), tt.out, len(tt.out))
			}
		})
	}
}

// The ring does not keep an event's frames alive: once no caller holds a
// frame, it is collected and the next caller encodes it again.
func TestEventFramesNotKeptAlive(t *testing.T) {
	// frameSize keeps the frames out of the tiny allocator, whose blocks
	// may outlive their last reference.
	const frameSize = 4096
	c := MustReadyCache(t, 16, []*Object{MustPod(t, "default", "a", 5, "web")}, 5)
	w := MustWatch(t, c, 5, false, Predicate{})
	MustApply(t, c, 6, ev(watch.Modified, MustPod(t, "default", "a", 6, "web")))
	e := MustReceive(t, w)
	var calls atomic.Int32
	encode := func() ([]byte, error) { calls.Add(1); return make([]byte, frameSize), nil }
	tests := []struct {
		name  string
		frame func() []byte
	}{
		{name: "json", frame: func() []byte { return e.Frame(watch.Modified) }},
		{name: "other format", frame: func() []byte { b, _ := e.EncodedFrame("pb", watch.Modified, encode); return b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := tt.frame()
			if again := tt.frame(); &again[0] != &first[0] {
				t.Fatalf("got a new frame while the first is held, want the shared one")
			}
			want := string(first)
			held := weak.Make(&first[0])
			first = nil
			runtime.GC()
			if held.Value() != nil {
				t.Errorf("got the dropped frame still alive, want it collected")
			}
			if got := tt.frame(); string(got) != want {
				t.Errorf("got frame %q after the collection, want %q", got, want)
			}
		})
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("got %d encodes, want 2 (one before and one after the collection)", got)
	}
}
