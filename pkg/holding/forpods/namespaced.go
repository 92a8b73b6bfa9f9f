package forpods

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// secretsGVR is core v1 secrets: held in a namespace only when
// pod-identity-resources lists them.
var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// NamespacedConfig wires Namespaced. Clock and Logger may be nil.
type NamespacedConfig struct {
	// Secrets allows holding secrets in a namespace.
	Secrets bool
	// Covered reports whether the local API already serves gvr in ns
	// whole (a configured or cluster-wide held resource); nil means never.
	Covered func(gvr schema.GroupVersionResource, ns string) bool
	// MaxPerNamespace bounds the resources held in one namespace at once.
	MaxPerNamespace int
	Caps            Caps
	// Restored are the holdings an earlier run stored, with their caches
	// restored from the store (see StoredNamespaced).
	Restored   []RestoredHolding
	CacheSize  int // each new cache's event ring
	Pods       *versioncache.Cache
	PodPresent PodPresent
	Mint       Minter
	Sync       NamespacedSyncer
	// API serves the local reads of one holding's cache in ns.
	API func(cache *versioncache.Cache, ns string) (http.Handler, error)
	// Authorized reports whether a request's caller was authorized by
	// the cloud for it; nil means AuthorizedPerRequest.
	Authorized func(*http.Request) bool
	Store      Store
	Connected  func() bool // nil means always
	Clock      clock.WithTicker
	Logger     *slog.Logger
}

// Namespaced are the resources held in one namespace for the pods of that
// namespace on this node: an operator's ConfigMaps or custom resources.
// It implements door.Holdings for namespaced reads. Safe for concurrent
// use.
type Namespaced struct {
	cfg   NamespacedConfig
	log   *slog.Logger
	stats *nsStats

	mu sync.Mutex
	// byKey are the holdings, running or not. Guarded by mu.
	byKey map[nsKey]*nsHolding
	// retryAt is when a holding stopped as gone or over a cap may start
	// again; it outlives the holding's drop. Guarded by mu.
	retryAt map[nsKey]time.Time
	// runCtx is Run's context, nil before Run starts. Guarded by mu.
	runCtx context.Context
	wg     sync.WaitGroup
}

// nsKey names one namespaced holding.
type nsKey struct {
	gvr schema.GroupVersionResource
	ns  string
}

// nsHolding is one resource held in one namespace.
type nsHolding struct {
	res   cloudsync.Resource
	cache *versioncache.Cache
	api   http.Handler
	// Guarded by Namespaced.mu:
	owners   map[string]door.Pod // by pod UID
	run      *nsWorker           // the running sync; nil when not syncing
	last     *nsWorker           // the latest sync, running or stopping
	orphaned time.Time           // when it stopped while holding data; zero otherwise
	dropping bool
	// stopped says why the last sync stopped: "" (running, or no owner
	// left), stopGone, stopCap or stopFailed.
	stopped string
	// identity is the pod whose token the sync uses, namespace/name.
	identity string
}

// Why a namespaced holding's sync stopped, as status shows it.
const (
	stopGone   = "not served or not allowed by the cloud"
	stopCap    = "over a cap"
	stopFailed = "its sync failed"
)

// NewNamespaced returns Namespaced with cfg's restored holdings; Run
// starts them.
func NewNamespaced(cfg NamespacedConfig) *Namespaced {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Authorized == nil {
		cfg.Authorized = AuthorizedPerRequest
	}
	m := &Namespaced{cfg: cfg, log: cfg.Logger.With("component", "held-in-namespace"), stats: newNSStats(),
		byKey: map[nsKey]*nsHolding{}, retryAt: map[nsKey]time.Time{}}
	for _, r := range cfg.Restored {
		api, err := cfg.API(r.Cache, r.Resource.Namespace)
		if err != nil {
			m.log.Warn("a stored holding cannot be served; dropping it", "resource", r.Resource.Key(), "err", err)
			api = nil
		}
		h := &nsHolding{res: r.Resource, cache: r.Cache, api: api, owners: map[string]door.Pod{}}
		// Without owners the holding is dropped after the grace: one that
		// cannot be served, or of secrets no longer allowed.
		allowed := api != nil && (r.Resource.GVR != secretsGVR || cfg.Secrets)
		for _, p := range r.Owners {
			if allowed && p.UID != "" && p.Namespace == r.Resource.Namespace {
				h.owners[p.UID] = p
			}
		}
		m.byKey[nsKey{r.Resource.GVR, r.Resource.Namespace}] = h
	}
	return m
}

// ForPods is false: a namespaced holding never changes how the node's own
// identity is authorized (its reads keep the node's view).
func (m *Namespaced) ForPods(requestinfo.Attributes) bool { return false }

// Authorized makes pod an owner of a's resource in a's namespace when a
// lists or watches it there, pod is of that namespace and on this node,
// and the resource may be held; it starts the holding if it can. The
// request that starts it waits up to firstListWait for the first list.
func (m *Namespaced) Authorized(ctx context.Context, pod door.Pod, a requestinfo.Attributes) {
	key, ok := m.holdable(pod, a)
	if !ok || !m.cfg.PodPresent(pod.Namespace, pod.Name, pod.UID) {
		return
	}
	h, w := m.own(ctx, key, pod)
	if w == nil || h.cache.Ready() || (m.cfg.Connected != nil && !m.cfg.Connected()) {
		return
	}
	waitFirstList(ctx, m.cfg.Clock, h.cache, w.done)
}

// holdable returns the holding a namespaced list or watch a by pod may
// start: one collection, in pod's own namespace, of a resource that may
// be held there and is not served whole already.
func (m *Namespaced) holdable(pod door.Pod, a requestinfo.Attributes) (nsKey, bool) {
	if !a.ResourceRequest || a.Subresource != "" || a.Name != "" || a.Namespace == "" ||
		(a.Verb != "list" && a.Verb != "watch") || pod.Namespace != a.Namespace {
		return nsKey{}, false
	}
	key := nsKey{schema.GroupVersionResource{Group: a.Group, Version: a.Version, Resource: a.Resource}, a.Namespace}
	if key.gvr.Version == "" || key.gvr.Resource == "" || (key.gvr == secretsGVR && !m.cfg.Secrets) {
		return nsKey{}, false
	}
	if m.cfg.Covered != nil && m.cfg.Covered(key.gvr, key.ns) {
		return nsKey{}, false
	}
	return key, true
}

// waitFirstList waits up to firstListWait for cache to serve, for ctx, or
// for the sync to end (done).
func waitFirstList(ctx context.Context, clk clock.WithTicker, cache *versioncache.Cache, done <-chan struct{}) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := clk.NewTimer(firstListWait)
	defer t.Stop()
	go func() {
		select {
		case <-t.C():
			cancel()
		case <-done:
			cancel()
		case <-wctx.Done():
		}
	}()
	_ = cache.WaitForRV(wctx, 1) // not served in time: the request is forwarded
}
