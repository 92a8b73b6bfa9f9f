package cloudsync

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// batchSyncer returns a Syncer on a fake clock and a cloud watch channel.
func batchSyncer(t *testing.T) (*Syncer, *clocktesting.FakeClock, chan watch.Event) {
	t.Helper()
	e := mustEnv(t, t.TempDir())
	clk := clocktesting.NewFakeClock(time.Now())
	s := New(Config{Resource: e.res, ListerWatcher: e.lw, Discovery: fakeDiscovery{}, Store: e.store, Cache: e.cache, Link: e.link, Clock: clk})
	return s, clk, make(chan watch.Event, 2*maxBatch)
}

func modified(rv uint64) watch.Event {
	return watch.Event{Type: watch.Modified, Object: cm("a", "x", rv, "v")}
}

type batchResult struct {
	b    batch
	open bool
	err  error
}

func runNextBatch(s *Syncer, ch chan watch.Event) <-chan batchResult {
	out := make(chan batchResult, 1)
	go func() {
		b, open, err := s.nextBatch(context.Background(), ch, stops{})
		out <- batchResult{b, open, err}
	}()
	return out
}

func TestNextBatchLoneEventDoesNotWait(t *testing.T) {
	s, clk, ch := batchSyncer(t)
	ch <- modified(1)
	select {
	case r := <-runNextBatch(s, ch):
		if len(r.b.events) != 1 || !r.open || r.err != nil {
			t.Errorf("got %d events, open %v, err %v; want 1, true, nil", len(r.b.events), r.open, r.err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("a lone event waited for the group commit window")
	}
	if clk.HasWaiters() {
		t.Error("got a timer for a lone event, want none")
	}
}

func TestNextBatchBurstWaitsForWindow(t *testing.T) {
	s, clk, ch := batchSyncer(t)
	ch <- modified(1)
	ch <- modified(2)
	res := runNextBatch(s, ch)
	deadline := time.Now().Add(waitTimeout)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("a burst did not open the group commit window")
		}
		time.Sleep(time.Millisecond)
	}
	ch <- modified(3) // arrives within the window
	select {
	case r := <-res:
		t.Fatalf("batch of %d events returned before the window ended", len(r.b.events))
	case <-time.After(50 * time.Millisecond):
	}
	clk.Step(groupCommitWindow)
	r := <-res
	if len(r.b.events) != 3 || r.b.rv != 3 || r.err != nil {
		t.Errorf("got %d events up to rv %d (err %v), want 3 up to 3", len(r.b.events), r.b.rv, r.err)
	}
}

func TestNextBatchBoundedByCount(t *testing.T) {
	s, _, ch := batchSyncer(t)
	for rv := range uint64(maxBatch + 10) {
		ch <- modified(rv + 1)
	}
	r := <-runNextBatch(s, ch)
	if len(r.b.events) != maxBatch || r.err != nil {
		t.Errorf("got %d events (err %v), want %d without waiting", len(r.b.events), r.err, maxBatch)
	}
	if len(ch) != 10 {
		t.Errorf("got %d events left, want 10", len(ch))
	}
}
