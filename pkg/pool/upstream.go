package pool

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// LeaderRetry is how long a follower reads a resource from the cloud
// after the leader refused it, could not be reached or was behind, before
// it asks the leader again (at a watch restart).
const LeaderRetry = time.Minute

// UpstreamCloud names the cloud as a resource's upstream.
const UpstreamCloud = "cloud"

// Source is the leader's pool door as a resource's lister and watcher.
type Source struct {
	// Name is "pool:<node>", the upstream in metrics and status.
	Name string
	LW   cache.ListerWatcherWithContext
}

// UpstreamConfig is one follower resource's choice of upstream.
type UpstreamConfig struct {
	// Resource names the resource in metrics and logs.
	Resource string
	// Cloud reads the resource from the cloud, as without pools.
	Cloud cache.ListerWatcherWithContext
	// Leader is the leader's pool door for the resource and a channel
	// closed when the Lease names another; ok false when there is no
	// leader to read from (none, or this member leads).
	Leader func() (src Source, changed <-chan struct{}, ok bool)
	Stats  *Stats
	Clock  clock.Clock
	Logger *slog.Logger
}

// Upstream is a follower's ListerWatcher for a pool-wide resource: the
// leader's pool door while there is one that serves it, else the cloud.
// It keeps the cloud's resourceVersions whichever answers, so a watch
// moves between them at the resourceVersion it reached: the leader's 410
// or too-large-RV answer sends that very request to the cloud, and only
// the cloud's 410 reaches the syncer (which then relists).
type Upstream struct {
	cfg UpstreamConfig

	mu sync.Mutex
	// failed is the leader that last could not serve, and cloudUntil when
	// it is asked again (a new leader is asked at once). Guarded by mu.
	failed     string
	cloudUntil time.Time
	// cloudOnce sends the next call to the cloud: the leader could not
	// serve a resourceVersion. Guarded by mu.
	cloudOnce bool
}

var _ cache.ListerWatcherWithContext = (*Upstream)(nil)

// NewUpstream returns cfg's Upstream.
func NewUpstream(cfg UpstreamConfig) *Upstream {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Upstream{cfg: cfg}
}

// leader is the leader to read from now, if any; a channel closed when
// the Lease names another (nil when there is no election to watch); and
// whether there is a leader this call does not read (it could not serve).
func (u *Upstream) leader() (src Source, changed <-chan struct{}, ok, skipped bool) {
	src, changed, ok = u.cfg.Leader()
	u.mu.Lock()
	defer u.mu.Unlock()
	once := u.cloudOnce
	u.cloudOnce = false
	if ok && (once || (src.Name == u.failed && u.cfg.Clock.Now().Before(u.cloudUntil))) {
		return Source{}, changed, false, true
	}
	return src, changed, ok, false
}

// ListWithContext lists from the leader, else the cloud.
func (u *Upstream) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if src, _, ok, _ := u.leader(); ok {
		obj, err := src.LW.ListWithContext(ctx, opts)
		if err == nil {
			u.cfg.Stats.use(u.cfg.Resource, src.Name)
			return obj, nil
		}
		u.leaderFailed(src.Name, "list", err)
		u.nowCloud()
	}
	u.cfg.Stats.use(u.cfg.Resource, UpstreamCloud)
	return u.cfg.Cloud.ListWithContext(ctx, opts)
}

// WatchWithContext watches the leader, else the cloud, from opts's
// resourceVersion.
// A cloud watch ends when the Lease names another leader, or LeaderRetry
// after it was taken instead of a leader that could not serve, so the
// syncer resumes at the leader from the resourceVersion it reached; the
// cloud's errors (its 410) reach the syncer.
func (u *Upstream) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	src, changed, ok, skipped := u.leader()
	if ok {
		w, err := src.LW.WatchWithContext(ctx, opts)
		if err == nil {
			u.cfg.Stats.use(u.cfg.Resource, src.Name)
			return u.guard(w, src.Name, changed, nil), nil
		}
		u.leaderFailed(src.Name, "watch", err)
		u.nowCloud()
		skipped = true
	}
	u.cfg.Stats.use(u.cfg.Resource, UpstreamCloud)
	w, err := u.cfg.Cloud.WatchWithContext(ctx, opts)
	if err != nil || changed == nil {
		return w, err
	}
	var retry <-chan time.Time
	if skipped {
		retry = u.cfg.Clock.After(LeaderRetry)
	}
	return u.guard(w, UpstreamCloud, changed, retry), nil
}

// nowCloud spends a pending cloudOnce on the call going to the cloud now:
// the very request the leader could not serve.
func (u *Upstream) nowCloud() {
	u.mu.Lock()
	u.cloudOnce = false
	u.mu.Unlock()
}

// leaderFailed records why the leader did not serve: a resourceVersion it
// no longer or not yet has sends the next call to the cloud (and a leader
// behind this follower is left for LeaderRetry); anything else sends
// every call to the cloud for LeaderRetry.
func (u *Upstream) leaderFailed(leader, what string, err error) {
	reason := "unavailable"
	u.mu.Lock()
	u.failed = leader
	switch {
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		reason, u.cloudOnce = "expired", true
	case apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge):
		reason, u.cloudOnce = "behind", true
		u.cloudUntil = u.cfg.Clock.Now().Add(LeaderRetry)
	default:
		u.cloudUntil = u.cfg.Clock.Now().Add(LeaderRetry)
	}
	u.mu.Unlock()
	u.cfg.Stats.fallback(u.cfg.Resource, reason)
	if u.cfg.Logger != nil {
		u.cfg.Logger.Info("reading the cloud instead of the pool's leader", "resource", u.cfg.Resource,
			"leader", leader, "call", what, "reason", reason, "err", err)
	}
}

// guard passes an upstream's events on until its stream ends, the Lease
// names another leader, or retry fires. From the leader (retry nil) an
// error ends it too and is never the syncer's: the syncer's next watch,
// from the resourceVersion it reached, goes to the cloud. From the cloud
// every event passes.
func (u *Upstream) guard(w watch.Interface, upstream string, changed <-chan struct{}, retry <-chan time.Time) watch.Interface {
	fromLeader := upstream != UpstreamCloud
	g := &guarded{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(g.out)
		defer w.Stop()
		for {
			select {
			case <-g.stop:
				return
			case <-changed:
				return
			case <-retry:
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Error && fromLeader {
					u.leaderFailed(upstream, "watch", errorOf(ev.Object))
					return
				}
				select {
				case g.out <- ev:
				case <-g.stop:
					return
				}
			}
		}
	}()
	return g
}

// errorOf is a watch ERROR event's object as an error.
func errorOf(obj runtime.Object) error {
	if st, ok := obj.(*metav1.Status); ok {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return errors.New("the leader's watch sent an error")
}

// guarded is the leader's watch as the syncer sees it.
type guarded struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (g *guarded) Stop() { g.stopOnce.Do(func() { close(g.stop) }) }

func (g *guarded) ResultChan() <-chan watch.Event { return g.out }
