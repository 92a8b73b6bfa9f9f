package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// wiring is what serve builds, phase by phase: the stored state and the
// cloud (loadState), the loops that sync and hold (newLoops), the local
// API and its doors (openAPI), then run. Each phase reads what the ones
// before it set; nothing is shared with another goroutine until run.
type wiring struct {
	cfg   config
	store *metastore.Store
	st    storeState
	log   *slog.Logger

	// set by loadState
	conns        *link.Conns
	cloud        *rest.Config
	scope        string
	scopeChecker holding.Check
	res          []cloudsync.Resource
	caches       []*versioncache.Cache
	restored     []forpods.RestoredHolding
	link         *link.Link

	// set by newLoops
	ops     *operations.View
	tokens  atrest.TokenStore
	syncers []*cloudsync.Syncer
	demand  func(context.Context) error
	held    *forpods.Holdings
	nsHeld  *forpods.Namespaced
	version *cloudsync.VersionKeeper
	elect   *pool.Elector
	// poolStats are the pool-wide resources' upstreams, and follower reads
	// them from the pool's leader; nil without a pool.
	poolStats *pool.Stats
	follower  *pool.Follower

	// set by openAPI
	verifier *satoken.Verifier
}

// loadState reaches the cloud's config, settles the scope and what is
// held, and loads every cache from the store.
func (w *wiring) loadState(ctx context.Context, configured []cloudsync.Resource) error {
	w.conns = link.NewConns(nil)
	cloud, err := cloudConfig(w.cfg.Kubeconfig, w.conns)
	if err != nil {
		return err
	}
	w.cloud = cloud
	useRotatingCredentials(cloud, w.log)
	if w.scope, w.res, w.scopeChecker, err = holding.Scoped(ctx, w.cfg.SyncScope, w.cfg.NodeName, configured, cloud, w.store, w.log); err != nil {
		return err
	}
	forPods, err := holding.PodHeldResources(w.cfg.PodIdentityResources, w.res)
	if err != nil {
		return err
	}
	w.res = append(w.res, forPods...)
	restored, nsRes, err := forpods.RestoreNamespaced(ctx, w.store, w.log)
	if err != nil {
		return err
	}
	caches, err := startup.Prepare(ctx, w.store, cloudsync.StoredOf(append(slices.Clip(w.res), nsRes...)),
		w.cfg.NodeName, w.cfg.WatchCacheSize, w.log)
	if err != nil {
		return err
	}
	w.caches, w.restored = forpods.SplitRestored(caches, len(w.res), restored)
	w.link, err = newLink(w.cfg, cloud, w.conns, w.log)
	return err
}

// newLoops builds the sync loops, the holdings for pods and the cloud's
// version keeper.
func (w *wiring) newLoops(ctx context.Context) error {
	w.ops = newOps(w.cfg, w.res, w.caches, w.conns, w.link.Connected, w.store, w.st)
	var err error
	if w.tokens, err = atrest.NewTokenStore(ctx, w.store, w.st.sealer != nil, w.log); err != nil {
		return err
	}
	clients, err := newCloudClients(w.cloud)
	if err != nil {
		return err
	}
	obs := operations.NewObserver(w.ops.Metrics(), w.res)
	if err := w.newPool(); err != nil {
		return err
	}
	w.syncers = holding.Syncers(cloudsync.Config{Discovery: clients.lookup, Store: operations.ObservedStore{Store: w.store, Observer: obs},
		Link: w.link, Logger: w.log, Observer: obs}, clients.raw, clients.meta, w.res, w.caches, pool.NodeOf(w.follower))
	dc := demand.Config{Discovery: clients.lookup, Store: w.store, Link: w.link, Logger: w.log, Observer: obs}
	if w.demand, err = demand.Runner(dc, clients.raw, w.res, w.caches); err != nil {
		return err
	}
	hc, err := w.holdingsConfig(clients, obs)
	if err != nil {
		return err
	}
	if w.held, err = forpods.NewForNode(hc); err != nil {
		return err
	}
	w.ops.ObserveHoldings(w.held)
	if w.nsHeld, err = forpods.NewNamespacedForNode(hc, w.held); err != nil {
		return err
	}
	w.ops.ObserveNamespaced(w.nsHeld)
	w.version, err = newVersionKeeper(ctx, clients, w.store, w.log)
	return err
}

// newPool builds the pool's election and the follower of its leader, and
// shows them in the metrics and health; nothing without a pool.
func (w *wiring) newPool() error {
	var err error
	c := w.cfg
	m := forpods.PoolMember(pool.MemberConfig{Pool: c.Pool, Namespace: c.PoolNamespace, ServiceAccount: c.PoolServiceAccount,
		Audience: c.PoolAudience, Self: pool.Holder{Node: c.NodeName, Address: c.PoolListenAddress},
		Pods: holding.NodePods(w.res, w.caches), Logger: w.log}, w.cloud, w.conns)
	if w.elect, err = pool.NewElection(m); err != nil {
		return err
	}
	if w.follower, w.poolStats, err = pool.NewMemberFollower(m, w.elect); err != nil {
		return err
	}
	w.ops.ObservePoolMember(w.elect, w.poolStats, w.res)
	return nil
}

// openAPI builds the local API, the stored answers in front of it and the
// doors, and opens them.
func (w *wiring) openAPI(ctx context.Context) (*door.Set, error) {
	served, widened := holding.SplitWidened(w.res, w.caches)
	handler, err := listwatch.New(listwatch.Config{Caches: served, Widened: widened, Cloud: w.cloud,
		CloudConnected: w.link.Connected, Logger: w.log, Version: w.version, Scopes: holding.LocalScopes(w.res),
		Current: forpods.CurrentOf(w.held), View: kubernetesServiceView(w.cfg, w.log)})
	if err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	meta := offline.MetaStore{Store: w.store}
	api := offline.WithStoredAnswers(handler, w.res, meta, w.tokens, served, w.cfg.NodeName, w.link, w.log)
	api = forpods.RouteNamespaced(w.nsHeld, api)
	if w.verifier, err = newTokenVerifier(ctx, w.cfg, w.cloud, served, meta, w.log); err != nil {
		return nil, err
	}
	doors, err := w.openDoors(api, served)
	if err != nil {
		return nil, err
	}
	w.ops.AddNote(doors.PodsNote)
	return doors, nil
}

// run starts the watchdog and every loop, the sync loops behind the scope
// gate, and serves until ctx ends.
func (w *wiring) run(ctx context.Context, doors *door.Set) error {
	n, err := operations.NewNotifier(w.ops.Clock(), w.ops.WatchdogProbe(doors.Probe()), w.ops.StatusLine)
	if err != nil {
		return errors.Join(fmt.Errorf("systemd watchdog: %w", err), doors.Close())
	}
	w.log.Info("serving", "node", w.cfg.NodeName, "resources", len(w.res))
	gate := holding.NewGate(w.scopeChecker, w.log)
	runs := []func(context.Context) error{gate.Run, w.version.Run, w.link.Run,
		atrest.StoredPruner(w.store, w.tokens, w.ops.Clock(), w.cfg.OfflineAuthzGrace, w.log)}
	for _, r := range append(cloudsync.RunnersOf(w.syncers), w.demand, forpods.RunnerOf(w.held), forpods.NamespacedRunnerOf(w.nsHeld), pool.RunnerOf(w.elect)) {
		if r != nil {
			runs = append(runs, gate.Hold(r))
		}
	}
	for _, r := range []func(context.Context) error{offline.TokenForgetter(w.res, w.caches, w.tokens, w.log),
		satoken.RunnerOf(w.verifier, w.link.Connected)} {
		if r != nil {
			runs = append(runs, r)
		}
	}
	return runUntilDone(ctx, daemonLoops{doors: doors, runs: runs, caches: w.caches, notify: n, exited: w.ops.SyncExits()}, w.log)
}
