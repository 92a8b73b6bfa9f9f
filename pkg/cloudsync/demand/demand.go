package demand

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// scrubRetry is how long Holder waits before retrying a WAL checkpoint
// that a concurrent reader kept from completing; a few retries fit well
// inside the 60 s within which a dropped object's bytes must be gone.
const scrubRetry = 5 * time.Second

// heardEvery is how often a kind nothing is held of is reported current
// (Config.Observer): well within the shortest sensible max-staleness, a
// cloud bookmark's minute.
const heardEvery = 30 * time.Second

// Store is the durable side of a Holder. *metastore.Store satisfies
// it.
type Store interface {
	Apply(ctx context.Context, resource string, ops []metastore.Op, watermark uint64) error
	PutMeta(ctx context.Context, key string, value []byte) error
	// GetMeta fails with metastore.ErrNotFound for a key never put.
	GetMeta(ctx context.Context, key string) ([]byte, error)
	// Scrub checkpoints and truncates the write-ahead log, so that deleted
	// rows (overwritten in place by secure_delete) leave no copy on disk.
	Scrub(ctx context.Context) error
}

// Kind is one kind a Holder holds objects of: a resource marked
// OnDemand and the cache local clients read it from.
type Kind struct {
	Resource cloudsync.Resource
	Cache    *versioncache.Cache
}

// Config wires a Holder. Clock and Logger may be nil.
type Config struct {
	// Pods and Nodes are the local caches of the node's pods and its own
	// Node; their contents decide what is referenced.
	Pods, Nodes *versioncache.Cache
	Secrets     Kind
	ConfigMaps  Kind
	// Source returns a lister-watcher of one cloud object: r narrowed to a
	// namespace and a metadata.name field selector.
	Source    func(r cloudsync.Resource) cache.ListerWatcherWithContext
	Discovery cloudsync.Discoverer
	Store     Store
	Link      *link.Link
	// Observer is told, for /readyz's staleness, that a kind is current:
	// when a held object's watch delivers (a state, an event or a
	// bookmark), and every heardEvery for a kind nothing is held of,
	// which nothing can be stale in. May be nil.
	Observer cloudsync.Observer
	Clock    clock.Clock
	Logger   *slog.Logger
}

// Holder holds the secrets and configmaps that the node's pods (and its
// Node) reference, and nothing else: the set the Node authorizer lets the
// node read. Each referenced object is watched on its own, by name, as the
// kubelet does. When the last reference goes, the watch stops and the
// object is deleted from the cache (local watchers see DELETED) and from
// the store, whose deleted bytes are then scrubbed from disk.
//
// Run owns every field below but noStream and probe; workers only send
// on updates.
type Holder struct {
	cfg  Config
	log  *slog.Logger
	refs *nodescope.Set
	// owners are the pods (and the node) whose references are in refs.
	owners map[nodescope.Owner]bool
	// workers are the running per-object watches, one per held ref.
	workers map[nodescope.Ref]*objectWorker
	// nextGen numbers workers, so updates of a stopped one are ignored.
	nextGen uint64
	updates chan objectUpdate
	wg      sync.WaitGroup
	// scrubDue is set when deleted rows may still be in the WAL.
	scrubDue bool
	// resume are the resourceVersions the held objects' watches resume
	// from after a restart.
	resume resumePoints
	// regressed is closed when a syncer finds the cloud's history behind
	// the stored one; replaced once taken.
	regressed <-chan struct{}
	// noStream is set, by kind, once the cloud refused a streaming watch
	// of that kind's objects (streamOff). Atomic: the workers read and set
	// it.
	noStream [nodescope.ConfigMap + 1]atomic.Bool
	// startExpired is, by kind, the newest stored point a start's own
	// resume of that kind was answered 410 for: the cloud restarted while
	// the daemon was down, and its watch cache starts above that point,
	// so a start's resume of a point not above it is dropped before it is
	// sent (dropExpiredResume). Atomic: the workers read and raise it.
	startExpired [nodescope.ConfigMap + 1]atomic.Uint64
	// probe shares, among the workers that lost the cloud together, the
	// one probe that tells whether it still serves their resume points
	// (probe.go). Guarded by its own mutex: the workers use it.
	probe prober
}

// New returns a Holder; the caller loaded its kinds' caches from the
// store.
func New(cfg Config) *Holder {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Observer == nil {
		cfg.Observer = cloudsync.NopObserver{}
	}
	return &Holder{
		cfg: cfg, log: cfg.Logger.With("component", "on-demand"),
		refs: nodescope.NewSet(), owners: map[nodescope.Owner]bool{},
		workers: map[nodescope.Ref]*objectWorker{}, updates: make(chan objectUpdate),
		resume: resumePoints{rv: map[nodescope.Ref]uint64{}}, regressed: cfg.Link.Regressed(),
	}
}

// kind returns the Kind holding objects of k.
func (d *Holder) kind(k nodescope.Kind) Kind {
	if k == nodescope.Secret {
		return d.cfg.Secrets
	}
	return d.cfg.ConfigMaps
}

// Run holds the referenced objects until ctx ends, then stops every
// per-object watch and returns nil. It returns an error only if the store
// fails.
func (d *Holder) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		d.wg.Wait()
	}()
	if err := d.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	err := d.loop(ctx)
	if d.resume.timer != nil {
		// Shutting down: keep the latest points for the next start.
		if ferr := d.flushResume(context.WithoutCancel(ctx)); ferr != nil {
			d.log.Warn("resume points not written", "err", ferr)
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// start waits for discovery information and for the pod and node caches,
// and makes the held kinds' caches ready.
func (d *Holder) start(ctx context.Context) error {
	for _, k := range []Kind{d.cfg.Secrets, d.cfg.ConfigMaps} {
		if err := d.ensureInfo(ctx, k); err != nil {
			return err
		}
	}
	if err := d.cfg.Pods.WaitForRV(ctx, 1); err != nil {
		return fmt.Errorf("wait for pods: %w", err)
	}
	if err := d.cfg.Nodes.WaitForRV(ctx, 1); err != nil {
		return fmt.Errorf("wait for node: %w", err)
	}
	if err := d.loadResume(ctx, d.cfg.Secrets.Cache.Ready() && d.cfg.ConfigMaps.Cache.Ready()); err != nil {
		return err
	}
	for _, k := range []Kind{d.cfg.Secrets, d.cfg.ConfigMaps} {
		if k.Cache.Ready() {
			continue
		}
		// Nothing is held yet: start empty at the pods' RV, a real cloud
		// RV, so that the first held object is applied above it or
		// replaces the state.
		rv := d.cfg.Pods.RV()
		if err := d.cfg.Store.Apply(ctx, k.Resource.Key(), nil, rv); err != nil {
			return fmt.Errorf("start %s: %w", k.Resource.Key(), err)
		}
		k.Cache.Replace(nil, rv)
	}
	return nil
}

// ensureInfo fetches a kind's discovery information unless it was loaded
// from the store, retrying until the cloud answers.
func (d *Holder) ensureInfo(ctx context.Context, k Kind) error {
	if _, ok := k.Cache.Info(); ok {
		return nil
	}
	retry := link.NewRetrier(d.cfg.Clock)
	for {
		info, err := cloudsync.DiscoverInfo(d.cfg.Discovery, k.Resource)
		if err == nil {
			return persistInfo(ctx, d.cfg.Store, k, info)
		}
		d.log.Warn("cloud discovery failed, backing off", "resource", k.Resource.Key(), "err", err)
		if err := retry.Wait(ctx, err); err != nil {
			return err
		}
	}
}

var (
	// errStopped means a local cache the Holder follows was closed.
	errStopped = errors.New("local cache closed")
	// errLinkDead means the link probes failed for longer than the watch
	// progress timeout while an object was watched.
	errLinkDead = errors.New("cloud link down longer than the watch progress timeout")
)
