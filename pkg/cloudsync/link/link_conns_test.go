package link

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeConns are cloud connections as the Link sees them.
type fakeConns struct {
	mu   sync.Mutex
	last time.Time // guarded by mu
	lost time.Time // guarded by mu; what LostPing returns
	// closed is what Closed returns.
	closed chan struct{}
	// closeAlls counts CloseAll calls.
	closeAlls atomic.Int32
}

func newFakeConns() *fakeConns { return &fakeConns{closed: make(chan struct{}, 1)} }

func (f *fakeConns) LastRead() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakeConns) read(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = at
}

func (f *fakeConns) LostPing() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}

func (f *fakeConns) loseAt(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lost = at
}

func (f *fakeConns) Closed() <-chan struct{} { return f.closed }
func (f *fakeConns) CloseAll()               { f.closeAlls.Add(1) }

// TestLinkDoesNotProbeWhileHeard: an hour of connections heard every
// http2ReadIdleTimeout (their PINGs) costs no probe beyond the first, and
// a probe follows once they have been silent for the watch progress
// timeout.
func TestLinkDoesNotProbeWhileHeard(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	p := &fakeProbe{}
	conns := newFakeConns()
	l := New(Config{Probe: p.probe, Conns: conns, Clock: clk})
	runLink(t, l)
	waitFor(t, "link up", l.Connected)
	for range int(time.Hour / http2ReadIdleTimeout) {
		waitFor(t, "the prober to wait", clk.HasWaiters)
		clk.Step(http2ReadIdleTimeout)
		conns.read(clk.Now())
	}
	if got := p.calls.Load(); got != 1 {
		t.Fatalf("probes in an hour of heard connections: got %d, want 1 (the first)", got)
	}
	waitFor(t, "the prober to wait", clk.HasWaiters)
	clk.Step(DefaultWatchProgressTimeout - time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	if got := p.calls.Load(); got != 1 {
		t.Fatalf("probes before the connections were silent for the timeout: got %d, want 1", got)
	}
	clk.Step(time.Millisecond)
	waitFor(t, "a probe of silent connections", func() bool { return p.calls.Load() == 2 })
}

// TestLinkProbesWhenAConnectionCloses: a closed connection (a failed
// HTTP/2 PING) is probed at once, and a failed probe then closes the
// others so the next request dials anew.
func TestLinkProbesWhenAConnectionCloses(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
	p := &fakeProbe{}
	conns := newFakeConns()
	l := New(Config{Probe: p.probe, Conns: conns, Clock: clk})
	runLink(t, l)
	waitFor(t, "link up", l.Connected)
	waitFor(t, "the prober to wait", clk.HasWaiters)

	p.state.Store(probeBlackHole)
	conns.closed <- struct{}{}
	waitFor(t, "a probe after a closed connection", func() bool { return p.calls.Load() == 2 })
	if got := conns.closeAlls.Load(); got != 0 {
		t.Fatalf("CloseAll before the probe failed: got %d calls, want 0", got)
	}
	waitFor(t, "the probe timer", clk.HasWaiters)
	clk.Step(probeTimeout)
	waitFor(t, "link down", func() bool { return !l.Connected() })
	if got := conns.closeAlls.Load(); got != 1 {
		t.Errorf("CloseAll after a timed-out probe: got %d calls, want 1", got)
	}
}

// TestLinkDownOnALostPing: a connection closed for an unanswered PING
// while the whole link was silent reports the link down at once, before
// the probe that follows it is answered or times out, and closes the other
// connections; one lost before the last successful probe, or followed by
// a read on another connection, is only probed, as any closed connection
// is. The cloud is black-holed: a probe is not answered.
func TestLinkDownOnALostPing(t *testing.T) {
	for _, tt := range []struct {
		name string
		// lost and read are when the PING was lost and when a byte was
		// last read, relative to the link's first (successful) probe.
		lost, read time.Duration
		wantDown   bool
	}{
		{"lost with the link silent", 14 * time.Second, 0, true},
		{"lost before the last probe", -time.Second, 0, false},
		{"another connection read after it", 14 * time.Second, 14*time.Second + time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
			start := clk.Now()
			p := &fakeProbe{}
			conns := newFakeConns()
			l := New(Config{Probe: p.probe, Conns: conns, Clock: clk})
			runLink(t, l)
			waitFor(t, "link up", l.Connected)
			waitFor(t, "the prober to wait", clk.HasWaiters)
			p.state.Store(probeBlackHole)
			clk.Step(tt.read)
			conns.read(start.Add(tt.read))
			conns.loseAt(start.Add(tt.lost))
			conns.closed <- struct{}{}
			waitFor(t, "a probe after a closed connection", func() bool { return p.calls.Load() == 2 })
			time.Sleep(10 * time.Millisecond)
			if got := !l.Connected(); got != tt.wantDown {
				t.Errorf("link down before the probe timed out: got %v, want %v", got, tt.wantDown)
			}
			wantCloseAlls := int32(0)
			if tt.wantDown {
				wantCloseAlls = 1
			}
			if got := conns.closeAlls.Load(); got != wantCloseAlls {
				t.Errorf("CloseAll calls before the probe timed out: got %d, want %d", got, wantCloseAlls)
			}
		})
	}
}

// TestLinkKeepsConnectionsOnAnAnswer: a probe the cloud answered, even
// with an error, came over a live connection, which is kept.
func TestLinkKeepsConnectionsOnAnAnswer(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		wantClose int32
	}{
		{"refused", errors.New("connection refused"), 1},
		{"server error", apierrors.NewInternalError(errors.New("boom")), 0},
		{"overloaded", apierrors.NewTooManyRequests("busy", 1), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conns := newFakeConns()
			l := New(Config{Probe: func(context.Context) error { return tt.err }, Conns: conns,
				Clock: testingclock.NewFakeClock(time.Unix(1e9, 0))})
			l.probe(context.Background())
			if got := conns.closeAlls.Load(); got != tt.wantClose {
				t.Errorf("CloseAll calls: got %d, want %d", got, tt.wantClose)
			}
		})
	}
}

// TestLinkDownProbesJittered: while down, probes come every probeInterval
// plus up to backoffJitter, not all at the same instant.
func TestLinkDownProbesJittered(t *testing.T) {
	clk := newRecClock()
	p := &fakeProbe{}
	p.state.Store(probeRefused)
	l := New(Config{Probe: p.probe, Clock: clk})
	runLink(t, l)
	const probes = 20
	for range probes {
		waitFor(t, "the prober to wait", clk.HasWaiters)
		clk.Step(downPause)
	}
	distinct := map[time.Duration]bool{}
	for _, d := range clk.timers() {
		if d < probeInterval || d > downPause {
			t.Fatalf("pause while down: got %v, want within [%v, %v]", d, probeInterval, downPause)
		}
		distinct[d] = true
	}
	if len(distinct) < 2 {
		t.Errorf("pauses while down: got %d distinct of %d, want them jittered", len(distinct), len(clk.timers()))
	}
}

// TestLinkSlowProbeWhileHeard: a probe that times out while a cloud
// connection reads bytes is a slow cloud, not a lost one: the link stays
// up and keeps its connections. Without a byte read meanwhile it is a
// black hole: down, every connection closed.
func TestLinkSlowProbeWhileHeard(t *testing.T) {
	for _, tt := range []struct {
		name          string
		readMidway    bool
		wantConnected bool
		wantClose     int32
	}{
		{"bytes read while the probe waited", true, true, 0},
		{"nothing read while the probe waited", false, false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
			p := &fakeProbe{}
			p.state.Store(probeBlackHole)
			conns := newFakeConns()
			conns.read(clk.Now().Add(-time.Second))
			l := New(Config{Probe: p.probe, Conns: conns, Clock: clk})
			l.record(clk.Now(), nil)
			done := make(chan struct{})
			go func() { defer close(done); l.probe(context.Background()) }()
			waitFor(t, "the probe timer", clk.HasWaiters)
			clk.Step(probeTimeout / 2)
			if tt.readMidway {
				conns.read(clk.Now())
			}
			clk.Step(probeTimeout / 2)
			<-done
			if got := l.Connected(); got != tt.wantConnected {
				t.Errorf("connected: got %v, want %v", got, tt.wantConnected)
			}
			if got := conns.closeAlls.Load(); got != tt.wantClose {
				t.Errorf("CloseAll calls: got %d, want %d", got, tt.wantClose)
			}
		})
	}
}
