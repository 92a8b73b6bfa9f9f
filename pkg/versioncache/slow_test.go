package versioncache

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Stalled watchers (clients that never read, as behind a full TCP window)
// are closed once their buffer fills, and never delay the fan-out to a
// healthy one: Apply returns at once, and the healthy watcher receives
// every event, in order, without being evicted.
func TestStalledWatchersDoNotDelayHealthyOne(t *testing.T) {
	const (
		stalled = 300
		events  = 3 * maxWatcherBuffer
		// maxDelay bounds one event's delivery to the healthy watcher. It
		// is far above the microseconds a delivery takes, so it only
		// catches a fan-out that waits for stalled watchers.
		maxDelay = 5 * time.Second
	)
	c := MustReadyCache(t, DefaultCapacity, nil, 0)
	for range stalled {
		MustWatch(t, c, 0, false, Predicate{})
	}
	healthy := MustWatch(t, c, 0, false, Predicate{})
	published := make([]time.Time, events+1) // by RV; written before Apply
	var received atomic.Uint64               // the healthy watcher's last RV
	delays := make(chan []time.Duration, 1)
	go func() {
		var got []time.Duration
		for e := range healthy.Events() {
			got = append(got, time.Since(published[e.RV]))
			received.Store(e.RV)
		}
		delays <- got
	}()

	objs := make([]*Object, events+1)
	for rv := uint64(1); rv <= events; rv++ {
		objs[rv] = MustPod(t, "ns", fmt.Sprintf("p%d", rv), rv, "")
	}
	for rv := uint64(1); rv <= events; rv++ {
		// Like a real client, the healthy one keeps up with the event
		// rate: never more than half its buffer behind.
		waitUntil(t, func() bool { return rv-received.Load() <= maxWatcherBuffer/2 })
		published[rv] = time.Now()
		MustApply(t, c, rv, ev(watch.Added, objs[rv]))
	}
	waitUntil(t, func() bool { return received.Load() == events })
	c.watchMu.Lock()
	registered := len(c.watchers)
	c.watchMu.Unlock()
	healthy.Stop()
	got := <-delays

	if healthy.Evicted() || len(got) != events {
		t.Fatalf("healthy watcher: got %d of %d events (evicted %v)", len(got), events, healthy.Evicted())
	}
	if registered != 1 {
		t.Errorf("got %d registered watchers, want only the healthy one (the %d stalled ones closed)", registered, stalled)
	}
	slices.Sort(got)
	p99 := got[len(got)*99/100]
	t.Logf("healthy watcher delivery delay with %d stalled watchers: p99 %v, max %v", stalled, p99, got[len(got)-1])
	if got[len(got)-1] > maxDelay {
		t.Errorf("got a delivery delay of %v, want under %v", got[len(got)-1], maxDelay)
	}
}

// waitUntil polls cond until it holds, failing the test after
// receiveTimeout.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(receiveTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v", receiveTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}
