package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// dbFile is the SQLite database inside --data-dir.
	dbFile = "state.db"
	// dataDirMode keeps the state, which includes secrets, private to the
	// daemon's user.
	dataDirMode = 0o700
	// shutdownTimeout bounds the whole ordered shutdown, well inside
	// systemd's default 90 s stop timeout.
	shutdownTimeout = 20 * time.Second
	// cloudQPS and cloudBurst bound the sync loop's own request rate to the
	// cloud; watches are long-lived, so steady state needs very little.
	cloudQPS   = 20
	cloudBurst = 40
	// userAgent names the daemon in the cloud's audit logs.
	userAgent = "apiserver-lite"
)

// runDaemon owns the daemon's lifecycle: it returns when ctx is cancelled
// and the ordered shutdown is done, or when startup or serving fails.
func runDaemon(ctx context.Context, cfg config) error {
	log, stopGC, err := startLog(cfg)
	if err != nil {
		return err
	}
	defer stopGC()
	// Sockets systemd holds for the doors are claimed first: a socket
	// that disagrees with its door's flag fails the start at once.
	sockets, err := door.InheritSockets(cfg.doorSockets())
	if err != nil {
		return err
	}
	defer sockets.Close() // those no door took, on a failed start
	res, err := syncResources(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, dataDirMode); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	// A database unusable for its content is moved aside (and logged), so
	// the daemon starts empty and relists instead of crash-looping.
	sealing, err := atrest.StateSealing(cfg.EncryptionKeyFile, cfg.DataDir)
	if err != nil {
		return err // names the key file
	}
	store, rec, err := metastore.OpenOrRecover(ctx, filepath.Join(cfg.DataDir, dbFile),
		metastore.Options{EventLogSize: cfg.WatchCacheSize, Logger: log, Sealing: sealing})
	if err != nil {
		return atrest.OpenStoreError(err, cfg.EncryptionKeyFile, cfg.DataDir) // says "open metastore"
	}
	err = serve(ctx, cfg, res, store, storeState{recovery: rec, sealer: sealing.Sealer, sockets: sockets}, log)
	if cerr := store.Close(); cerr != nil {
		err = errors.Join(err, cerr) // says "close metastore"
	}
	log.Info("stopped", "err", err)
	return err
}

// startLog validates cfg and returns the daemon's logger, having logged
// the settings that weaken security and applied the memory settings;
// stopGC ends the GC percent's adjustment.
func startLog(cfg config) (log *slog.Logger, stopGC func(), err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	log, err = newLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range cfg.warnings() {
		log.Warn(w)
	}
	return log, applyMemorySettings(cfg, log), nil
}

// serve runs the sync loops and the local API until ctx ends, then shuts
// them down in order: stop accepting, end watches, stop and flush the sync
// loops. The caller closes the store last.
func serve(ctx context.Context, cfg config, res []cloudsync.Resource, store *metastore.Store, st storeState, log *slog.Logger) error {
	w := &wiring{cfg: cfg, store: store, st: st, log: log}
	if err := w.loadState(ctx, res); err != nil {
		return err
	}
	if err := w.newLoops(ctx); err != nil {
		return err
	}
	doors, err := w.openAPI(ctx)
	if err != nil {
		return err
	}
	return w.run(ctx, doors)
}

// storeState is what opening the store found out.
type storeState struct {
	// recovery says whether the database was moved aside.
	recovery metastore.Recovery
	// sealer is the state key; nil without one.
	sealer metastore.Sealer
	// sockets are where the doors listen: systemd's, else their own.
	sockets *door.Sockets
}

// newLink returns the cloud's one link prober, listening to conns.
func newLink(cfg config, cloud *rest.Config, conns *link.Conns, log *slog.Logger) (*link.Link, error) {
	probe, err := link.NewProbe(cloud)
	if err != nil {
		return nil, err
	}
	return link.New(link.Config{Probe: probe, Conns: conns, WatchProgressTimeout: cfg.WatchProgressTimeout,
		MaxConcurrentRelists: cfg.MaxConcurrentRelists, RelistSpread: cfg.RelistSpread, Logger: log}), nil
}

// daemonLoops are what runUntilDone runs and stops.
type daemonLoops struct {
	doors  *door.Set
	runs   []func(context.Context) error // the sync loops
	caches []*versioncache.Cache
	notify *operations.Notifier
	// exited counts sync loops that returned before shutdown began.
	exited *atomic.Int32
}

// runUntilDone serves and runs the sync loops until ctx ends. systemd is
// told READY=1 once the local API serves, and STOPPING=1 when ctx ends.
func runUntilDone(ctx context.Context, d daemonLoops, log *slog.Logger) error {
	var wg sync.WaitGroup
	syncCtx, stopSync := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSync()
	for _, run := range d.runs {
		wg.Go(func() {
			_ = run(syncCtx)
			if syncCtx.Err() == nil {
				d.exited.Add(1)
			}
		})
	}
	serveErr := make(chan error, d.doors.Len())
	d.doors.Serve(&wg, serveErr)
	notifyCtx, stopNotify := context.WithCancel(ctx)
	defer stopNotify()
	wg.Go(func() { d.notify.Run(notifyCtx, log) })

	var err error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-serveErr:
		err = fmt.Errorf("serve: %w", err)
	}
	stopNotify() // STOPPING=1
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	shutdownDone := make(chan error, 1)
	wg.Go(func() { shutdownDone <- d.doors.Shutdown(shutdownCtx) }) // stop accepting
	for _, c := range d.caches {
		c.Close() // end watches, so Shutdown need not wait for them
	}
	if serr := <-shutdownDone; serr != nil {
		err = errors.Join(err, fmt.Errorf("shutdown: %w", serr), d.doors.Close())
	}
	stopSync() // an in-flight batch commits or rolls back whole
	wg.Wait()
	return err
}

// cloudConfig loads the cloud's client configuration; conns watches its
// connections.
func cloudConfig(kubeconfig string, conns *link.Conns) (*rest.Config, error) {
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	c.QPS, c.Burst, c.UserAgent = cloudQPS, cloudBurst, userAgent
	link.ConfigureTransport(c, conns)
	return c, nil
}

// cloudClients are the daemon's clients of the cloud, made once.
type cloudClients struct {
	raw  *cloudsync.RawClient
	disc *discovery.DiscoveryClient
	// lookup is disc's resource lookups, concurrent ones of a group
	// version sharing one request (every sync's at start).
	lookup cloudsync.Discoverer
	meta   metadata.Interface // metadata lists of the lean relist
}

func newCloudClients(cloud *rest.Config) (cloudClients, error) {
	raw, err := cloudsync.NewRawClient(cloud)
	if err != nil {
		return cloudClients{}, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cloud)
	if err != nil {
		return cloudClients{}, fmt.Errorf("cloud discovery: %w", err)
	}
	meta, err := metadata.NewForConfig(cloud)
	if err != nil {
		return cloudClients{}, fmt.Errorf("cloud metadata client: %w", err)
	}
	return cloudClients{raw: raw, disc: disc, lookup: cloudsync.SharedDiscovery(disc), meta: meta}, nil
}

// newVersionKeeper returns the keeper of the cloud's version, loaded with
// the version last persisted so /version answers before the cloud does.
func newVersionKeeper(ctx context.Context, cl cloudClients, store *metastore.Store, log *slog.Logger) (*cloudsync.VersionKeeper, error) {
	k := cloudsync.NewVersionKeeper(cloudsync.VersionConfig{Fetcher: cl.disc, Store: store, Logger: log})
	if err := k.Load(ctx); err != nil {
		return nil, err
	}
	return k, nil
}
