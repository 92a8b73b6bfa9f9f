package link

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

const (
	// probeInterval is the pause between two link probes while the link
	// is down (jittered by backoffJitter): short enough that a returning
	// link is seen within seconds. No probe is sent while the link is up
	// and its connections are heard.
	probeInterval = 2 * time.Second
	// probeTimeout bounds one probe, so a black-holed link (packets
	// dropped, no RST) reads as down within seconds instead of after TCP's
	// retransmission timeout.
	probeTimeout = 3 * time.Second
	// DefaultWatchProgressTimeout is how long the cloud's connections may
	// be silent before the link is probed, and how long the link may fail
	// its probes before every cloud watch is treated as dead and
	// re-established once the link works again.
	DefaultWatchProgressTimeout = 15 * time.Second
	// DefaultMaxConcurrentRelists bounds the full LISTs in flight against
	// the cloud, so a node reconnecting with many resources does not fire
	// them all at once.
	DefaultMaxConcurrentRelists = 2
	// MaxDownPause is the longest pause between two probes while the link
	// is down, jitter included.
	MaxDownPause = time.Duration(float64(probeInterval) * (1 + backoffJitter))
)

// errProbeTimeout means a probe got no answer within probeTimeout.
var errProbeTimeout = errors.New("cloud link probe timed out")

// errPingLost means a cloud connection's HTTP/2 PING went unanswered while
// no connection read a byte: it stands for a probe without an answer.
var errPingLost = errors.New("cloud connection's PING unanswered")

// ErrDead means the link probes have failed for longer than the watch
// progress timeout, so a cloud watch cannot be trusted to be alive.
var ErrDead = errors.New("cloud link down longer than the watch progress timeout")

// Config wires a Link. Probe is required.
type Config struct {
	// Probe sends one cheap request to the cloud; see NewProbe.
	Probe func(ctx context.Context) error
	// Conns are the cloud's connections, the liveness signal while the
	// link is up; see Conns. nil means none are watched: the link is then
	// probed every WatchProgressTimeout while up.
	Conns Connections
	// WatchProgressTimeout: 0 means DefaultWatchProgressTimeout.
	WatchProgressTimeout time.Duration
	// MaxConcurrentRelists: 0 means DefaultMaxConcurrentRelists.
	MaxConcurrentRelists int
	// RelistSpread is the window of RelistDelay: 0 means
	// DefaultRelistSpread.
	RelistSpread time.Duration
	Clock        clock.WithDelayedExecution // nil means the real clock
	Logger       *slog.Logger               // nil means slog.Default()
}

// Link decides whether the cloud is reachable. While it is up, the
// cloud's connections are the liveness signal: their HTTP/2 PINGs, watch
// events and bookmarks; it is probed only when one of them is lost or all
// have been silent for the watch progress timeout. While it is down, it is
// probed every probeInterval until it answers. A failed probe closes every
// connection, so the next request dials anew instead of waiting on a
// connection a middlebox has silenced. Syncers wait on it to come back
// instead of each timing its own retries, end their watches when it has
// been dead for too long, and share its bound on concurrent relists. Safe
// for concurrent use.
type Link struct {
	cfg Config
	// relists holds one token per relist in flight. Immutable.
	relists chan struct{}

	mu sync.Mutex
	// up is true while the last probe succeeded. Guarded by mu.
	up bool
	// okAt is when the last successful probe started. Guarded by mu.
	okAt time.Time
	// downSince is when the first failed probe of the current outage
	// started; zero while up. Guarded by mu.
	downSince time.Time
	// upCh is closed at the next transition to up, then replaced. Guarded
	// by mu.
	upCh chan struct{}
	// deadCh is closed once the link has been down for longer than the
	// watch progress timeout (then dead is true), and replaced, before
	// upCh is closed, when it is up again. Guarded by mu.
	deadCh chan struct{}
	dead   bool
	// regressedCh is closed, then replaced, each time a syncer finds the
	// cloud's history behind the stored one. Guarded by mu.
	regressedCh chan struct{}
	// outages counts the transitions to down (Outages). Guarded by mu.
	outages uint64
	// retryAfter is the last Retry-After a probe was answered with, at
	// retryAfterAt (RelistDelay). Guarded by mu.
	retryAfter   time.Duration
	retryAfterAt time.Time

	// rvs shares the readings of the cloud's resourceVersion (CloudRV);
	// it has its own lock.
	rvs rvReadings
}

// New returns a Link that is not connected until its first probe
// succeeds.
func New(cfg Config) *Link {
	if cfg.WatchProgressTimeout <= 0 {
		cfg.WatchProgressTimeout = DefaultWatchProgressTimeout
	}
	if cfg.MaxConcurrentRelists <= 0 {
		cfg.MaxConcurrentRelists = DefaultMaxConcurrentRelists
	}
	if cfg.RelistSpread <= 0 {
		cfg.RelistSpread = DefaultRelistSpread
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Link{cfg: cfg, relists: make(chan struct{}, cfg.MaxConcurrentRelists),
		upCh: make(chan struct{}), deadCh: make(chan struct{}), regressedCh: make(chan struct{})}
}

// Connected reports whether the last probe reached the cloud.
func (l *Link) Connected() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

// Run probes the cloud until ctx ends, and returns nil then: at once,
// then while the link is up only when its connections fall silent or one
// is lost (see Conns), and while it is down every probeInterval plus
// jitter; never sooner than the Retry-After of an overloaded cloud. A
// connection closed for an unanswered PING while every connection was
// silent reports the link down before the probe that follows it (see
// waitSilent).
func (l *Link) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		retryAfter := l.probe(ctx)
		if l.Connected() {
			if l.waitSilent(ctx, retryAfter) {
				// Probed at once: a link that lost only its old
				// connections' state (a NAT's) answers on a new one.
				l.losePing()
			}
			continue
		}
		_ = Sleep(ctx, l.cfg.Clock, max(wait.Jitter(probeInterval, backoffJitter), retryAfter))
	}
	return nil
}

// waitSilent returns once the link should be probed again: when a cloud
// connection was lost, or when none was heard for the watch progress
// timeout, but not before minWait, or when ctx ends. It returns true when
// the connection lost had its PING unanswered with the whole link silent
// (pingLost): that PING was a probe without an answer, and waiting for
// another would add probeTimeout to reporting a half-open link.
func (l *Link) waitSilent(ctx context.Context, minWait time.Duration) bool {
	notBefore := l.cfg.Clock.Now().Add(minWait)
	var closed <-chan struct{}
	if l.cfg.Conns != nil {
		closed = l.cfg.Conns.Closed()
	}
	for {
		wake := l.lastHeard().Add(l.cfg.WatchProgressTimeout)
		if wake.Before(notBefore) {
			wake = notBefore
		}
		d := wake.Sub(l.cfg.Clock.Now())
		if d <= 0 {
			return false
		}
		t := l.cfg.Clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-closed:
			t.Stop()
			if !l.cfg.Clock.Now().Before(notBefore) {
				return l.pingLost()
			}
		case <-t.C():
		}
	}
}

// pingLost reports whether a connection's PING went unanswered since the
// last probe succeeded, with nothing read on any connection since.
func (l *Link) pingLost() bool {
	at := l.cfg.Conns.LostPing()
	l.mu.Lock()
	okAt := l.okAt
	l.mu.Unlock()
	return at.After(okAt) && !l.cfg.Conns.LastRead().After(at)
}

// losePing records the link down for an unanswered PING, as for a probe
// without an answer, and closes every connection, as such a probe does.
func (l *Link) losePing() {
	l.cfg.Conns.CloseAll()
	l.record(l.cfg.Clock.Now(), errPingLost)
}

// lastHeard is when the cloud was last heard from: a successful probe or
// a byte read on any of its connections.
func (l *Link) lastHeard() time.Time {
	l.mu.Lock()
	heard := l.okAt
	l.mu.Unlock()
	if l.cfg.Conns != nil {
		if r := l.cfg.Conns.LastRead(); r.After(heard) {
			heard = r
		}
	}
	return heard
}

// probe runs one probe bounded by probeTimeout and records its result. A
// probe that got no answer, while no cloud connection read anything,
// closes every cloud connection and counts as a failure; one that timed
// out while a connection read from the cloud counts as an answer. It returns the
// Retry-After of a cloud that answered 429, else 0.
func (l *Link) probe(ctx context.Context) time.Duration {
	start := l.cfg.Clock.Now()
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t := l.cfg.Clock.AfterFunc(probeTimeout, func() { cancel(errProbeTimeout) })
	err := l.cfg.Probe(pctx)
	t.Stop()
	if ctx.Err() != nil {
		return 0
	}
	if err != nil && errors.Is(context.Cause(pctx), errProbeTimeout) {
		err = errProbeTimeout
		if l.heardSince(start) {
			// The cloud sent bytes while the probe waited: it is reachable
			// but slow to answer (an overloaded cloud, or this node's CPU
			// saturated, as when a fleet starts at once). Taking it for
			// lost would close every connection and end every watch,
			// adding the load that slowed it; a silenced link reads
			// nothing and is still reported.
			err = nil
		}
	}
	var retryAfter time.Duration
	if apierrors.IsTooManyRequests(err) {
		// An overloaded cloud answered: it is reachable, and asked to be
		// left alone for a while.
		if secs, ok := apierrors.SuggestsClientDelay(err); ok {
			retryAfter = min(time.Duration(secs)*time.Second, maxRetryAfter)
		}
		l.noteRetryAfter(retryAfter)
		err = nil
	}
	if err != nil && !answered(err) && l.cfg.Conns != nil {
		// The connection that carried the probe may be one a middlebox
		// silenced: the next request must dial anew.
		l.cfg.Conns.CloseAll()
	}
	l.record(start, err)
	return retryAfter
}

// heardSince reports whether any cloud connection read a byte after t.
func (l *Link) heardSince(t time.Time) bool {
	return l.cfg.Conns != nil && l.cfg.Conns.LastRead().After(t)
}

// answered reports whether err is the cloud's own answer, which a live
// connection carried.
func answered(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// record applies one probe result that started at start.
func (l *Link) record(start time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.okAt = start
		l.upLocked()
		return
	}
	if l.up || l.downSince.IsZero() {
		l.cfg.Logger.Warn("cloud link down", "err", err)
		l.downSince = start
		l.outages++
	}
	l.up = false
	if !l.dead && l.cfg.Clock.Since(l.downSince) >= l.cfg.WatchProgressTimeout {
		l.cfg.Logger.Warn("cloud link down longer than the watch progress timeout, ending every cloud watch",
			"timeout", l.cfg.WatchProgressTimeout)
		l.dead = true
		close(l.deadCh)
	}
}

// upLocked marks the link up and wakes the syncers waiting for it. mu must
// be held.
func (l *Link) upLocked() {
	if l.up {
		return
	}
	if !l.downSince.IsZero() {
		l.cfg.Logger.Info("cloud link up", "down", l.cfg.Clock.Since(l.downSince).Round(time.Millisecond))
	}
	l.up, l.downSince = true, time.Time{}
	if l.dead {
		l.dead, l.deadCh = false, make(chan struct{})
	}
	close(l.upCh)
	l.upCh = make(chan struct{})
}

// Up returns a channel closed when the link next comes up.
func (l *Link) Up() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.upCh
}

// Dead returns a channel closed once the link has been down for longer
// than the watch progress timeout; it is closed already if it has.
func (l *Link) Dead() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadCh
}

// Regressed returns a channel closed when a syncer next reports the
// cloud's history behind the stored one.
func (l *Link) Regressed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.regressedCh
}

// ReportRegressed tells every syncer that resource found the cloud's
// history behind the stored one, and returns the channel of the next
// report. The cloud's resource versions are shared by all its resources,
// so all of them relist: a resource whose watermark the rebuilt cloud's
// writes have already passed can no longer tell by itself.
func (l *Link) ReportRegressed(resource string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg.Logger.Warn("cloud history is behind the stored one, every resource relists", "foundBy", resource)
	close(l.regressedCh)
	l.regressedCh = make(chan struct{})
	return l.regressedCh
}

// WaitUp returns at once if the link is up, else when it comes up, or with
// ctx.Err() when ctx ends first.
func (l *Link) WaitUp(ctx context.Context) error {
	l.mu.Lock()
	up, ch := l.up, l.upCh
	l.mu.Unlock()
	if up {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
		return nil
	}
}

// AcquireRelist waits for a relist slot. The caller calls ReleaseRelist
// when its relist is done.
func (l *Link) AcquireRelist(ctx context.Context) error {
	select {
	case l.relists <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Link) ReleaseRelist() { <-l.relists }
