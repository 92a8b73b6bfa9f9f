package link

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// waitTimeout bounds every wait of these tests.
const waitTimeout = 10 * time.Second

// newUpLink returns a Link whose prober has seen the cloud.
func newUpLink() *Link {
	l := New(Config{Probe: func(context.Context) error { return nil }})
	l.record(time.Now(), nil)
	return l
}

// fakeProbe is the cloud as the link prober sees it: up, refusing, or
// black-holed (the probe hangs until its context ends).
type fakeProbe struct {
	state atomic.Int32 // one of probeUp, probeRefused, probeBlackHole
	calls atomic.Int32
}

const (
	probeUp int32 = iota
	probeRefused
	probeBlackHole
)

func (p *fakeProbe) probe(ctx context.Context) error {
	p.calls.Add(1)
	switch p.state.Load() {
	case probeRefused:
		return errors.New("connection refused")
	case probeBlackHole:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// recClock is a fake clock that records the duration of every timer.
type recClock struct {
	*testingclock.FakeClock
	mu   sync.Mutex
	durs []time.Duration // guarded by mu
}

func newRecClock() *recClock {
	return &recClock{FakeClock: testingclock.NewFakeClock(time.Unix(1e9, 0))}
}

func (c *recClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.durs = append(c.durs, d)
	c.mu.Unlock()
	return c.FakeClock.NewTimer(d)
}

func (c *recClock) timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.durs...)
}

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// runLink runs l until the test ends.
func runLink(t *testing.T, l *Link) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// stepProbe advances clk by one probe interval once the prober waits, and
// waits for the next probe to be made.
func stepProbe(t *testing.T, clk *testingclock.FakeClock, p *fakeProbe, d time.Duration) {
	t.Helper()
	n := p.calls.Load()
	waitFor(t, "the prober to wait", clk.HasWaiters)
	clk.Step(d)
	waitFor(t, "the next probe", func() bool { return p.calls.Load() > n })
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// downPause is the longest pause between two probes while the link is
// down, jitter included.
const downPause = MaxDownPause

func TestLinkProberStates(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	p := &fakeProbe{}
	l := New(Config{Probe: p.probe, Clock: clk, WatchProgressTimeout: 6 * time.Second})
	up := l.Up()
	runLink(t, l)
	waitFor(t, "link up", l.Connected)
	if !isClosed(up) {
		t.Errorf("up channel: got open after the link came up, want closed")
	}

	p.state.Store(probeRefused)
	// Up and without watched connections, the link is probed again only
	// after the watch progress timeout.
	stepProbe(t, clk, p, 6*time.Second)
	waitFor(t, "link down", func() bool { return !l.Connected() })
	dead := l.Dead()
	up = l.Up()
	for range 2 { // at most 5 s down: not yet past the 6 s watch progress timeout
		stepProbe(t, clk, p, downPause)
	}
	if isClosed(dead) {
		t.Fatalf("dead channel: got closed after 5 s down, want open before 6 s")
	}
	stepProbe(t, clk, p, downPause)
	waitFor(t, "dead channel closed", func() bool { return isClosed(dead) })

	p.state.Store(probeUp)
	stepProbe(t, clk, p, downPause)
	waitFor(t, "link up", l.Connected)
	if !isClosed(up) {
		t.Errorf("up channel: got open after the link came back, want closed")
	}
	if isClosed(l.Dead()) {
		t.Errorf("dead channel: got closed after the link came back, want a fresh open one")
	}
}

func TestLinkProbeTimesOutOnBlackHole(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	p := &fakeProbe{}
	p.state.Store(probeBlackHole)
	l := New(Config{Probe: p.probe, Clock: clk})
	done := make(chan struct{})
	go func() { defer close(done); l.probe(context.Background()) }()
	waitFor(t, "the probe timer", clk.HasWaiters)
	clk.Step(probeTimeout - time.Millisecond)
	select {
	case <-done:
		t.Fatalf("probe: got done before probeTimeout, want it waiting")
	case <-time.After(10 * time.Millisecond):
	}
	clk.Step(time.Millisecond)
	<-done
	if l.Connected() {
		t.Errorf("link: got connected after a black-holed probe, want disconnected")
	}
}

func TestBackoffCappedIncludingJitter(t *testing.T) {
	b := NewBackoff()
	var prev time.Duration
	for i := range 100 {
		d := b.Step()
		if d > MaxRetryDelay {
			t.Fatalf("step %d: got %v, want at most %v", i, d, MaxRetryDelay)
		}
		if i > 20 && d < backoffCap {
			t.Fatalf("step %d: got %v, want at least the cap %v", i, d, backoffCap)
		}
		prev = d
	}
	if prev < backoffCap {
		t.Errorf("last step: got %v, want the cap", prev)
	}
}

func TestRelistSlots(t *testing.T) {
	l := New(Config{Probe: func(context.Context) error { return nil }, MaxConcurrentRelists: 2})
	ctx := context.Background()
	for range 2 {
		if err := l.AcquireRelist(ctx); err != nil {
			t.Fatalf("acquire: %v", err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := l.AcquireRelist(short); err == nil {
		t.Fatalf("third acquire: got a slot, want it to wait")
	}
	l.ReleaseRelist()
	if err := l.AcquireRelist(ctx); err != nil {
		t.Errorf("acquire after release: %v", err)
	}
}

// TestLinkProbeHonoursRetryAfter: a 429 from the probe counts as
// reachable, and the next probe waits for its Retry-After instead of
// the watch progress timeout.
func TestLinkProbeHonoursRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name string
		secs int
		want time.Duration
	}{
		{"shorter than the watch progress timeout", 7, DefaultWatchProgressTimeout},
		{"longer than the watch progress timeout", 30, 30 * time.Second},
		{"capped", 3600, maxRetryAfter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newRecClock()
			busy := func(context.Context) error { return apierrors.NewTooManyRequests("busy", tt.secs) }
			l := New(Config{Probe: busy, Clock: clk})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- l.Run(ctx) }()
			waitFor(t, "the first pause", func() bool { return len(clk.timers()) > 0 })
			cancel()
			<-done
			if got := clk.timers()[0]; got != tt.want {
				t.Errorf("pause after a 429: got %s, want %s", got, tt.want)
			}
			if !l.Connected() {
				t.Errorf("Connected after a 429: got false, want true")
			}
		})
	}
}
