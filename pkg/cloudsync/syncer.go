package cloudsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// errExpired means the cloud can no longer serve the watermark (410): the
// syncer must relist.
var errExpired = errors.New("resource version expired in the cloud")

// errNotServed means the cloud's discovery does not list the resource.
var errNotServed = errors.New("resource not served by the cloud")

// Config wires a Syncer. Every field but Clock and Logger is required.
type Config struct {
	Resource      Resource
	ListerWatcher cache.ListerWatcherWithContext
	Discovery     Discoverer
	Store         Store
	Cache         Cache
	Link          *Link
	Clock         clock.Clock  // nil means the real clock
	Logger        *slog.Logger // nil means slog.Default()
	Observer      Observer     // nil means none
}

// Syncer keeps one resource in sync. Run is its only entry point; its
// fields are owned by the goroutine running it.
type Syncer struct {
	cfg     Config
	key     string
	log     *slog.Logger
	backoff *backoff
	// rv is the watermark: every cloud change up to rv is durable in the
	// Store and visible in the Cache.
	rv uint64
	// needList is set when there is no watermark yet or the cloud
	// answered 410 to it.
	needList bool
	// haveInfo is set once discovery information was fetched this run.
	haveInfo bool
}

// New returns a Syncer that resumes from the Cache's current state, which
// the caller loaded from the Store.
func New(cfg Config) *Syncer {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	s := &Syncer{cfg: cfg, key: cfg.Resource.Key(), backoff: newBackoff(cfg.Clock)}
	s.log = cfg.Logger.With("resource", s.key)
	if cfg.Cache.Ready() {
		s.rv = cfg.Cache.RV()
	}
	s.needList = s.rv == 0
	return s
}

// Run syncs until ctx ends. Cloud failures are retried with backoff; Run
// returns nil when ctx ends.
func (s *Syncer) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := s.syncOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			continue // the cloud closed the watch: re-watch from s.rv
		case errors.Is(err, errExpired):
			s.log.Info("cloud expired the watermark, relisting", "rv", s.rv)
			s.needList = true
			continue
		}
		s.cfg.Link.report(s.key, false)
		s.cfg.Observer.CloudError(s.key, err)
		s.log.Warn("cloud sync failed, backing off", "err", err, "rv", s.rv)
		if s.backoff.wait(ctx) != nil {
			return nil
		}
	}
	return nil
}

func (s *Syncer) syncOnce(ctx context.Context) error {
	if err := s.ensureInfo(ctx); err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	if s.needList {
		s.cfg.Observer.Relisted(s.key, s.relistReason())
		if err := s.relist(ctx); err != nil {
			return err
		}
		s.needList = false
	}
	return s.watch(ctx)
}

// ensureInfo fetches the resource's discovery information once per run
// and persists it for offline restarts.
func (s *Syncer) ensureInfo(ctx context.Context) error {
	if s.haveInfo {
		return nil
	}
	gvr := s.cfg.Resource.GVR
	list, err := s.cfg.Discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return err
	}
	for _, r := range list.APIResources {
		if r.Name != gvr.Resource {
			continue
		}
		r.Group, r.Version = gvr.Group, gvr.Version
		raw, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode info: %w", err)
		}
		if err := s.cfg.Store.PutMeta(ctx, s.cfg.Resource.InfoKey(), raw); err != nil {
			return fmt.Errorf("persist info: %w", err)
		}
		s.cfg.Cache.SetInfo(r)
		s.haveInfo = true
		return nil
	}
	return fmt.Errorf("%w: %s", errNotServed, gvr)
}

// relistReason says why a relist is needed.
func (s *Syncer) relistReason() string {
	if s.rv == 0 {
		return RelistInitial
	}
	return RelistExpired
}

// reachedCloud records a successful cloud call.
func (s *Syncer) reachedCloud() {
	s.cfg.Link.report(s.key, true)
	s.backoff.reset()
}
