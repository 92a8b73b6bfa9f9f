package operations

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/utils/clock"
)

// Paths the daemon answers itself, on every door, never proxied.
const (
	PathMetrics = caller.PathMetrics
	PathLivez   = caller.PathLivez
	PathReadyz  = caller.PathReadyz
	PathHealthz = caller.PathHealthz
	// PathStatus is the status document `apiserver-lite status` reads.
	PathStatus = "/debug/apiserver-lite/status"
)

// Config is what the operational view reports on.
type Config struct {
	Node      string
	Resources []cloudsync.Resource
	Caches    []*versioncache.Cache // Caches[i] serves Resources[i]
	// Link says whether the cloud is reachable.
	Link func() bool
	// CloudWatches is how many watches the daemon holds open on the
	// cloud; nil reports none.
	CloudWatches func() int
	Store        *metastore.Store
	// StorePath is the store's database file, whose size and file
	// system the metrics report; "" reports neither.
	StorePath    string
	Clock        clock.WithTicker
	MaxStaleness time.Duration
	// Recovery says whether the database was moved aside at startup.
	Recovery metastore.Recovery
	// Sealed is set when the store has a state key.
	Sealed bool
}

// View is the daemon's operational view: metrics, health, status and the
// systemd status line. Fields are set by New (holdings by
// ObserveHoldings, before serving) and never reassigned.
type View struct {
	node         string
	res          []cloudsync.Resource
	labels       []string              // labels[i] names res[i] (resourceLabels)
	caches       []*versioncache.Cache // caches[i] serves res[i]
	link         func() bool
	metrics      *metrics.Metrics
	store        *metastore.Store
	clock        clock.WithTicker
	maxStaleness time.Duration
	// recovery says whether the database was moved aside at startup.
	// Set before serving, then read-only.
	recovery metastore.Recovery
	// sealed is set when the store has a state key. Set before serving,
	// then read-only.
	sealed bool
	// holdings are the resources held for pods; nil when none. Set
	// before serving, then read-only.
	holdings *forpods.Holdings
	// namespaced are the namespaced holdings; nil when none. Set by
	// ObserveNamespaced before serving.
	namespaced *forpods.Namespaced
	// notes add informational /readyz lines; set by AddNote before
	// serving, then read-only.
	notes []Note
	// upstreams are a pool's upstreams; nil without a pool. Set by
	// ObservePool before serving.
	upstreams Upstreams

	// syncExited counts sync loops that returned before shutdown.
	syncExited atomic.Int32
	cacheMu    sync.Mutex
	// cacheProbe is closed when the /livez cache probe in flight ends; nil
	// when none runs. Guarded by cacheMu.
	cacheProbe chan struct{}

	probeMu sync.Mutex
	// probeAt and probeErr are the last store write probe. Guarded by
	// probeMu.
	probeAt  time.Time
	probeErr error
}

// New returns the operational view of c, with its metrics.
func New(c Config) *View {
	o := &View{node: c.Node, res: c.Resources, labels: resourceLabels(c.Resources), caches: c.Caches, link: c.Link, store: c.Store,
		clock: c.Clock, maxStaleness: c.MaxStaleness, recovery: c.Recovery, sealed: c.Sealed}
	o.metrics = metrics.New(o.clock, metrics.Sources{Resources: o.resourceStats, LinkUp: c.Link, CloudWatches: c.CloudWatches,
		Store:  func() (metrics.StoreStats, bool) { return storeStats(c.StorePath) },
		Sealed: func() bool { return o.sealed }})
	return o
}

// Metrics are the daemon's metrics.
func (o *View) Metrics() *metrics.Metrics { return o.metrics }

// Clock is the clock every timer of the view runs on.
func (o *View) Clock() clock.WithTicker { return o.clock }

// SyncExits counts the sync loops that returned before shutdown; a
// non-zero count fails /livez.
func (o *View) SyncExits() *atomic.Int32 { return &o.syncExited }

func (o *View) resourceStats() []metrics.ResourceStats {
	out := make([]metrics.ResourceStats, len(o.caches))
	for i, c := range o.caches {
		st := c.Stats()
		out[i] = metrics.ResourceStats{Resource: o.labels[i], Ready: st.Ready, RV: st.RV,
			Objects: st.Objects, Events: st.Events, Watchers: st.Watchers, TooSlow: st.TooSlow,
			Idle: o.res[i].ForPods && !st.Ready}
	}
	return out
}

// Handler serves the operational paths itself and everything else through
// api, counting and timing every request under the door's label.
func (o *View) Handler(api http.Handler, door string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+PathMetrics, o.metrics.Handler())
	for path, checks := range map[string]func(context.Context) []check{
		PathLivez: o.livenessChecks, PathHealthz: o.livenessChecks, PathReadyz: o.readinessChecks,
	} {
		h := serveChecks(path[1:], checks)
		mux.Handle("GET "+path, h)
		mux.Handle("GET "+path+"/{check...}", h) // one check, as kube-apiserver's /livez/ping
	}
	mux.HandleFunc("GET "+PathStatus, o.serveStatus)
	// The daemon's own profiles, for make bench and debugging; the doors
	// answer these paths locally and never forward them.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.Handle("/", api)
	known := map[string]bool{}
	for _, r := range o.res {
		known[resourceLabel(r)] = true // requests name the group-resource
	}
	return o.metrics.Instrument(mux, door, func(gr string) bool { return known[gr] })
}

// StatusLine is systemd's STATUS= line: link, readiness and freshness.
func (o *View) StatusLine() string {
	ready, watchers := 0, 0
	var stalest time.Duration
	loadable := 0
	for i, c := range o.caches {
		st := c.Stats()
		if st.Ready {
			ready++
		}
		if st.Ready || !o.res[i].ForPods { // one not held for pods is not missing
			loadable++
		}
		watchers += st.Watchers
		if st.Ready || !o.res[i].ForPods {
			age, _ := o.metrics.Staleness(o.labels[i])
			stalest = max(stalest, age)
		}
	}
	link := "cloud unreachable, serving last known state"
	if o.link() {
		link = "cloud connected"
	}
	return fmt.Sprintf("%s; %d/%d resources loaded; stalest %s; %d watchers",
		link, ready, loadable, stalest.Round(time.Second), watchers)
}
