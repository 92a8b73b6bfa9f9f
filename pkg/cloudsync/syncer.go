package cloudsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/relist"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// ErrExpired means the cloud can no longer serve the watermark (410): the
// syncer must relist.
var ErrExpired = errors.New("resource version expired in the cloud")

// errConflict means a cloud watch contradicts the stored history, as a
// cloud restored from a backup does: the syncer must relist, and so must
// every other resource's (see Link.reportRegressed).
var errConflict = errors.New("cloud history contradicts the stored state")

// ErrBehind means the cloud refused a watch from the watermark, or a read
// of a state not older than a point, as a resource version it has not
// reached: this resource relists. A cloud whose API server lags its peers
// answers so too, so the others do not.
var ErrBehind = errors.New("cloud behind the watermark")

// errNotServed means the cloud's discovery does not list the resource.
var errNotServed = errors.New("resource not served by the cloud")

// Config wires a Syncer. Every field but Clock and Logger is required.
type Config struct {
	Resource      Resource
	ListerWatcher cache.ListerWatcherWithContext
	Discovery     Discoverer
	Store         Store
	Cache         Cache
	Link          *link.Link
	Clock         clock.Clock  // nil means the real clock
	Logger        *slog.Logger // nil means slog.Default()
	Observer      Observer     // nil means none
	// Lean, with a Store that is a relist.KeyStore, lets a relist of a resource
	// synced before move only what changed; nil means full lists only.
	Lean relist.Source
}

// Syncer keeps one resource in sync. Run is its only entry point; its
// fields are owned by the goroutine running it.
type Syncer struct {
	cfg Config
	key string
	log *slog.Logger
	// backoff is the retry schedule, reset after each successful commit.
	backoff wait.Backoff
	// rv is the watermark: every cloud change up to rv is durable in the
	// Store and visible in the Cache.
	rv uint64
	// needList is why the next attempt relists, one of the Relist*
	// reasons; empty when it resumes from the watermark.
	needList string
	// resumed is the watermark the start resumes from, until the first
	// attempt ends: a 410 while rv is still it answers this start, not a
	// cloud restart every node hears at once (expired).
	resumed uint64
	// haveInfo is set once discovery information was fetched this run.
	haveInfo bool
	// checkRV is set on start and after a failure that may hide a restart
	// of the cloud (MayHideRestore): the cloud may have been restored from
	// a backup meanwhile, so the next resumed watch is vetted (vetResume):
	// unless it answers 410 (the relist then checks), the cloud's resource
	// version is checked before its first event is taken. An answer of the
	// running cloud (429, 403, ...) does not set it, so a start costs at
	// most one check, and a cloud restart, which expires the watermark,
	// none. A relist clears it. Set with dueCheck.
	checkRV bool
	// rvTicket is the Link's RVTicket when checkRV was last set: the
	// check takes a reading of the cloud begun after it, which it may
	// share with the other syncers (Link.CloudRV).
	rvTicket uint64
	// outagesAtCheck is the Link's Outages when the cloud's resource
	// version was last checked, or the state last listed: another count
	// sets checkRV.
	outagesAtCheck uint64
	// leanOff is set once the cloud refused a metadata list: the relists
	// of this run list full objects.
	leanOff bool
	// regressed is closed when a syncer reports the cloud regressed, and
	// replaced once this one has taken the report.
	regressed <-chan struct{}

	storeMu sync.Mutex
	// storeErr is why the last commit failed; nil once one succeeded.
	// Guarded by storeMu: StoreError reads it from other goroutines.
	storeErr error
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
		cfg.Observer = NopObserver{}
	}
	s := &Syncer{cfg: cfg, key: cfg.Resource.Key(), backoff: link.NewBackoff(), regressed: cfg.Link.Regressed(),
		outagesAtCheck: cfg.Link.Outages()}
	s.log = cfg.Logger.With("resource", s.key)
	if cfg.Cache.Ready() {
		s.rv = cfg.Cache.RV()
	}
	if s.rv == 0 {
		s.needList = RelistInitial
	}
	s.resumed = s.rv
	if s.needList == "" {
		s.dueCheck()
	}
	return s
}

// RunnersOf are the Run methods of syncers, as loops the daemon runs.
func RunnersOf(syncers []*Syncer) []func(context.Context) error {
	runs := make([]func(context.Context) error, len(syncers))
	for i, s := range syncers {
		runs[i] = s.Run
	}
	return runs
}

// Run syncs until ctx ends. Cloud and store failures are retried with
// backoff, cut short when the link prober sees the link come back; Run
// returns nil when ctx ends.
func (s *Syncer) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		up := s.cfg.Link.Up()
		err := s.syncOnce(ctx)
		atStart := s.resumed != 0 && s.rv == s.resumed
		s.resumed = 0
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			continue // the cloud closed the watch: re-watch from s.rv
		case errors.Is(err, ErrExpired):
			if s.expired(ctx, atStart) != nil {
				return nil
			}
			continue
		case errors.Is(err, errConflict), errors.Is(err, ErrBehind), errors.Is(err, errRegressedElsewhere):
			s.log.Warn("relisting", "reason", err, "rv", s.rv)
			s.noteRegressed(errors.Is(err, errConflict))
			continue
		case errors.Is(err, link.ErrDead):
			s.log.Warn("cloud watch presumed dead, re-watching once the link is up", "rv", s.rv)
			s.dueCheck()
			if s.cfg.Link.WaitUp(ctx) != nil || link.Sleep(ctx, s.cfg.Clock, s.cfg.Link.RelistDelay()) != nil {
				return nil
			}
			continue
		}
		if MayHideRestore(err) {
			s.dueCheck()
		}
		s.cfg.Observer.CloudError(s.key, err)
		s.log.Warn("cloud sync failed, backing off", "err", err, "rv", s.rv)
		if s.pause(ctx, err, up) != nil {
			return nil
		}
	}
	return nil
}

// StoreError is why the last commit to the store failed, or nil once a
// commit succeeded. While it is set the sync is paused with backoff and
// local clients read the last committed state. Safe for concurrent use.
func (s *Syncer) StoreError() error {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	return s.storeErr
}

// applyStore commits ops at watermark wm; see recordStore.
func (s *Syncer) applyStore(ctx context.Context, ops []metastore.Op, wm uint64) error {
	return s.recordStore(ctx, s.cfg.Store.Apply(ctx, s.key, ops, wm))
}

// recordStore records the outcome err of a commit for StoreError and
// resets the backoff only after a successful one. It returns err.
func (s *Syncer) recordStore(ctx context.Context, err error) error {
	if ctx.Err() != nil && err != nil {
		return err // shutting down: not a store fault
	}
	s.storeMu.Lock()
	s.storeErr = err
	s.storeMu.Unlock()
	if err == nil {
		s.backoff = link.NewBackoff()
	}
	return err
}

// expired readies a relist after the cloud expired the watermark. A
// restarted cloud expires every node's watches at once, so the relist
// waits for a delay within the relist window, unless the watermark is
// the one this start resumed from (atStart): a start's relist goes at
// once, as the rest of its reads do, paced by the opening limit.
func (s *Syncer) expired(ctx context.Context, atStart bool) error {
	s.log.Info("cloud expired the watermark, relisting", "rv", s.rv)
	s.needList = RelistExpired
	if atStart {
		return nil
	}
	return link.Sleep(ctx, s.cfg.Clock, s.cfg.Link.RelistDelay())
}

func (s *Syncer) syncOnce(ctx context.Context) error {
	if err := s.ensureInfo(ctx); err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	if s.regressedElsewhere() && s.needList == "" {
		s.needList = RelistRegressed
	}
	if s.cfg.Link.Outages() != s.outagesAtCheck {
		s.dueCheck()
	}
	if s.needList != "" {
		s.outagesAtCheck = s.cfg.Link.Outages()
		s.cfg.Observer.Relisted(s.key, s.needList)
		if err := s.relist(ctx); err != nil {
			return err
		}
		// The relist compared the cloud's state with the stored history,
		// and the watch resumes from the cloud's own list resourceVersion.
		s.needList, s.checkRV = "", false
	}
	return s.watch(ctx)
}

// ensureInfo fetches the resource's discovery information once per run
// and persists it for offline restarts.
func (s *Syncer) ensureInfo(ctx context.Context) error {
	if s.haveInfo {
		return nil
	}
	info, err := DiscoverInfo(s.cfg.Discovery, s.cfg.Resource)
	if err != nil {
		return err
	}
	if err := SaveInfo(ctx, s.cfg.Store, s.cfg.Resource, info); err != nil {
		return err
	}
	s.cfg.Cache.SetInfo(info)
	s.haveInfo = true
	return nil
}
