// Package linktest gives tests of the packages above link a running Link,
// a scripted prober and a clock that records its timers.
package linktest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// WaitTimeout bounds every wait of these helpers.
const WaitTimeout = 10 * time.Second

// Up returns a running Link whose prober has seen the cloud; it stops when
// the test ends.
func Up(t testing.TB) *link.Link {
	t.Helper()
	l := link.New(link.Config{Probe: func(context.Context) error { return nil }})
	Run(t, l)
	WaitFor(t, "the link to come up", l.Connected)
	return l
}

// Run runs l until the test ends.
func Run(t testing.TB, l *link.Link) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// WaitFor polls cond until it holds or WaitTimeout passes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The states of a Probe.
const (
	ProbeUp int32 = iota
	ProbeRefused
	ProbeBlackHole
)

// Probe is the cloud as the link prober sees it: up, refusing, or
// black-holed (the probe hangs until its context ends).
type Probe struct {
	State atomic.Int32 // one of ProbeUp, ProbeRefused, ProbeBlackHole
	Calls atomic.Int32
}

// Probe answers as State says; it is a link.Config's Probe.
func (p *Probe) Probe(ctx context.Context) error {
	p.Calls.Add(1)
	switch p.State.Load() {
	case ProbeRefused:
		return errors.New("connection refused")
	case ProbeBlackHole:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// RecClock is a fake clock that records the duration of every timer.
type RecClock struct {
	*testingclock.FakeClock
	mu   sync.Mutex
	durs []time.Duration // guarded by mu
}

// NewRecClock returns a RecClock at a fixed time.
func NewRecClock() *RecClock {
	return &RecClock{FakeClock: testingclock.NewFakeClock(time.Unix(1e9, 0))}
}

// NewTimer records d.
func (c *RecClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.durs = append(c.durs, d)
	c.mu.Unlock()
	return c.FakeClock.NewTimer(d)
}

// Timers are the durations of every timer made so far.
func (c *RecClock) Timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.durs...)
}

// readSettle is how long a read that does not wait for the relist delay
// is given to show before the delay is taken as waited for.
const readSettle = 50 * time.Millisecond

// MustReadAfterRelistDelay checks that the next read waits for a delay
// within the default relist window: the first timer made after the first
// before ones (timers of a duration in ignore are the caller's own
// bookkeeping) lies in the window; reads, the reads made so far, stays at
// want until the clock steps past the delay, and then reaches want+1.
func (c *RecClock) MustReadAfterRelistDelay(t testing.TB, before int, reads func() int, want int, ignore ...time.Duration) {
	t.Helper()
	var delay time.Duration
	WaitFor(t, "the read's delay", func() bool {
		for _, d := range c.Timers()[before:] {
			if !slices.Contains(ignore, d) {
				delay = d
				return true
			}
		}
		return false
	})
	if delay < 0 || delay >= link.DefaultRelistSpread {
		t.Errorf("read delay: got %v, want within [0, %v)", delay, link.DefaultRelistSpread)
	}
	time.Sleep(readSettle)
	if got := reads(); got != want {
		t.Fatalf("reads before the delay ended: got %d, want %d", got, want)
	}
	c.Step(delay)
	WaitFor(t, "the read after the delay", func() bool { return reads() == want+1 })
}
