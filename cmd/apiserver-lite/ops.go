package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/utils/clock"
)

// Paths the daemon answers itself, on every door, never proxied.
const (
	pathMetrics = "/metrics"
	pathLivez   = "/livez"
	pathReadyz  = "/readyz"
	pathHealthz = "/healthz"
	// pathStatus is the status document `apiserver-lite status` reads.
	pathStatus = "/debug/apiserver-lite/status"
)

// Door labels of the request metrics.
const (
	doorLoopback = "loopback" // the kubelet's authenticated door (listen-address)
	doorTLS      = "tls"      // the pods' authenticated door (secure-listen-address)
	doorInsecure = "insecure" // the plain-HTTP door (insecure-listen-address)
)

// ops is the daemon's operational view: metrics, health, status and the
// systemd notifications. Fields are set by newOps and never reassigned.
type ops struct {
	node         string
	res          []cloudsync.Resource
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
	// pods is the pods' door's state for /readyz; nil without doors. Set
	// before serving, then read-only.
	pods *podsDoor

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

func newOps(cfg config, res []cloudsync.Resource, caches []*versioncache.Cache, link func() bool, store *metastore.Store) *ops {
	o := &ops{node: cfg.NodeName, res: res, caches: caches, link: link, store: store,
		clock: clock.RealClock{}, maxStaleness: cfg.MaxStaleness}
	o.metrics = metrics.New(o.clock, metrics.Sources{Resources: o.resourceStats, LinkUp: link})
	return o
}

func (o *ops) resourceStats() []metrics.ResourceStats {
	out := make([]metrics.ResourceStats, len(o.caches))
	for i, c := range o.caches {
		st := c.Stats()
		out[i] = metrics.ResourceStats{Resource: resourceLabel(o.res[i]), Ready: st.Ready, RV: st.RV,
			Objects: st.Objects, Events: st.Events, Watchers: st.Watchers, TooSlow: st.TooSlow}
	}
	return out
}

// handler serves the operational paths itself and everything else through
// api, counting and timing every request.
func (o *ops) handler(api http.Handler, door string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+pathMetrics, o.metrics.Handler())
	for path, checks := range map[string]func(context.Context) []check{
		pathLivez: o.livenessChecks, pathHealthz: o.livenessChecks, pathReadyz: o.readinessChecks,
	} {
		h := serveChecks(path[1:], checks)
		mux.Handle("GET "+path, h)
		mux.Handle("GET "+path+"/{check...}", h) // one check, as kube-apiserver's /livez/ping
	}
	mux.HandleFunc("GET "+pathStatus, o.serveStatus)
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
		known[resourceLabel(r)] = true
	}
	return o.metrics.Instrument(mux, door, func(gr string) bool { return known[gr] })
}

// statusLine is systemd's STATUS= line: link, readiness and freshness.
func (o *ops) statusLine() string {
	ready, watchers := 0, 0
	var stalest time.Duration
	for i, c := range o.caches {
		st := c.Stats()
		if st.Ready {
			ready++
		}
		watchers += st.Watchers
		if age, ok := o.metrics.Staleness(resourceLabel(o.res[i])); ok {
			stalest = max(stalest, age)
		}
	}
	link := "cloud unreachable, serving last known state"
	if o.link() {
		link = "cloud connected"
	}
	return fmt.Sprintf("%s; %d/%d resources loaded; stalest %s; %d watchers",
		link, ready, len(o.caches), stalest.Round(time.Second), watchers)
}

// watchdogProbeTimeout bounds the self-probe behind each watchdog ping.
const watchdogProbeTimeout = 5 * time.Second

// selfProbe returns a check that GETs /livez through the listener at addr,
// so a watchdog ping proves the serving loop answers and the sync loops
// are not wedged.
// aliveProbe is the watchdog's liveness probe: a GET of /livez through
// the loopback door, or the liveness checks in process when that door is
// off.
func (o *ops) aliveProbe(door *selfDoor) func(context.Context) error {
	if door != nil {
		return selfProbe(door)
	}
	return func(ctx context.Context) error {
		for _, c := range o.livenessChecks(ctx) {
			if c.err != nil {
				return fmt.Errorf("%s: %w", c.name, c.err)
			}
		}
		return nil
	}
}

// selfProbe asks door's /livez. Over TLS it does not verify the serving
// certificate: it sends no credential and trusts nothing in the answer but
// its status, from a listener it opened itself.
func selfProbe(door *selfDoor) func(context.Context) error {
	host, port, _ := net.SplitHostPort(door.addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme, tr := "http", &http.Transport{DisableKeepAlives: true, Proxy: nil}
	if door.tls {
		scheme, tr.TLSClientConfig = "https", &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	}
	url := scheme + "://" + net.JoinHostPort(host, port) + pathLivez
	client := &http.Client{Timeout: watchdogProbeTimeout, Transport: tr}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("probe %s: %w", pathLivez, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("probe %s: status %d", pathLivez, resp.StatusCode)
		}
		return nil
	}
}

// writeJSON writes v as an indented JSON document.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
