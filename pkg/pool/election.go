package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// The election's durations, pinned: client-go's usual 15 s / 10 s / 2 s
// GET the Lease every 2 s on every member (25 requests a second at 50
// nodes). Followers leave a dead leader on their own watches' failure,
// not on the Lease, so these bound only how long a pool stays without a
// leader (then its followers read the cloud). See docs/pool.md.
const (
	// LeaseDuration is how long a Lease not renewed keeps its holder.
	LeaseDuration = 30 * time.Second
	// RenewDeadline is how long a leader tries to renew before it stops
	// leading and closes its pool door.
	RenewDeadline = 20 * time.Second
	// RetryPeriod is how often a member GETs the Lease (stretched by
	// client-go's jitter for non-leaders) and the leader renews it.
	RetryPeriod = 10 * time.Second
)

// leasePrefix names a pool's Lease: pool-<pool>.
const leasePrefix = "pool-"

// durations are an election's timings; pinned outside tests.
type durations struct{ lease, renew, retry time.Duration }

// pinned are the durations every pool runs with.
var pinned = durations{lease: LeaseDuration, renew: RenewDeadline, retry: RetryPeriod}

// ErrConfig means an election's configuration is unusable.
var ErrConfig = errors.New("pool election")

// Config is one member's election.
type Config struct {
	// Pool is the pool's name, a DNS label.
	Pool string
	// Namespace holds the pool's Lease.
	Namespace string
	// Self is this member as the Lease names it when it leads.
	Self Holder
	// Leases reads and writes the Lease, on the pool service account's
	// token (never the node's credentials).
	Leases coordinationv1client.LeasesGetter
	Logger *slog.Logger
}

// Elector runs one member's election and tells who leads.
type Elector struct {
	cfg Config
	d   durations

	mu sync.Mutex
	// leader is the member the Lease names, zero when none is known or
	// its identity does not parse. Guarded by mu.
	leader Holder
	// leading is whether this member leads. Guarded by mu.
	leading bool
	// changed is closed and replaced at each change of leader or
	// leading. Guarded by mu.
	changed chan struct{}
}

// New checks cfg and returns its election, not yet running.
func New(cfg Config) (*Elector, error) {
	return newElector(cfg, pinned)
}

func newElector(cfg Config, d durations) (*Elector, error) {
	if errs := validation.IsDNS1123Label(cfg.Pool); len(errs) > 0 {
		return nil, fmt.Errorf("%w: pool %q: %v", ErrConfig, cfg.Pool, errs)
	}
	if errs := validation.IsDNS1123Label(cfg.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("%w: namespace %q: %v", ErrConfig, cfg.Namespace, errs)
	}
	if err := cfg.Self.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Leases == nil || cfg.Logger == nil {
		return nil, fmt.Errorf("%w: no lease client or logger", ErrConfig)
	}
	return &Elector{cfg: cfg, d: d, changed: make(chan struct{})}, nil
}

// LeaseName is the pool's Lease in Config.Namespace.
func (e *Elector) LeaseName() string { return leasePrefix + e.cfg.Pool }

// Leader is the member the Lease names (ok false when none is known),
// whether that is this member, and a channel closed at the next change.
func (e *Elector) Leader() (leader Holder, ok, self bool, changed <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader, e.leader != (Holder{}), e.leading, e.changed
}

// Run takes part in the election until ctx ends, releasing the Lease if
// it leads then. A member that loses the lead stands again at once.
func (e *Elector) Run(ctx context.Context) error {
	le, err := leaderelection.NewLeaderElector(e.electionConfig())
	if err != nil {
		return fmt.Errorf("pool election: %w", err)
	}
	for ctx.Err() == nil {
		le.Run(ctx) // returns when the lead is lost or ctx ends
	}
	return nil
}

// electionConfig is client-go's election over the pool's Lease.
func (e *Elector) electionConfig() leaderelection.LeaderElectionConfig {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.LeaseName()},
		Client:     e.cfg.Leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.cfg.Self.String()},
	}
	return leaderelection.LeaderElectionConfig{
		Lock: lock, Name: e.LeaseName(), ReleaseOnCancel: true,
		LeaseDuration: e.d.lease, RenewDeadline: e.d.renew, RetryPeriod: e.d.retry,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { e.setLeading(true) },
			OnStoppedLeading: func() { e.setLeading(false) },
			OnNewLeader:      e.observe,
		},
	}
}

// setLeading records whether this member leads.
func (e *Elector) setLeading(leading bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if leading {
		e.leader = e.cfg.Self
	} else if e.leader == e.cfg.Self {
		e.leader = Holder{}
	}
	e.leading = leading
	e.changedLocked()
	e.cfg.Logger.Info("pool leadership", "pool", e.cfg.Pool, "leading", leading)
}

// observe records the leader the Lease names; an identity that does not
// parse names no leader (its followers read the cloud).
func (e *Elector) observe(identity string) {
	h, err := ParseHolder(identity)
	if err != nil {
		h = Holder{}
		e.cfg.Logger.Warn("the pool's Lease names no member; reading the cloud", "pool", e.cfg.Pool, "err", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if h == e.leader {
		return
	}
	e.leader = h
	e.changedLocked()
	e.cfg.Logger.Info("pool leader", "pool", e.cfg.Pool, "leader", h.Node, "address", h.Address)
}

// changedLocked wakes whoever waits on the last change. mu must be held.
func (e *Elector) changedLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}
