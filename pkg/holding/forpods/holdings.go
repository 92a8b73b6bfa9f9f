package forpods

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

const (
	// firstListWait bounds how long the request that starts a holding
	// waits for its first list to be committed before it is forwarded:
	// long enough for a few thousand objects, short enough that a client's
	// informer does not time out.
	firstListWait = 5 * time.Second
	// dropGrace is how long a holding's data outlives its last owner (its
	// sync stops at once): a DaemonSet's replacement pod reads again
	// within it and resumes from the watermark, and the data is still
	// dropped well inside a minute.
	dropGrace = 20 * time.Second
)

// Config wires Holdings. Clock and Logger may be nil.
type Config struct {
	Resources []Held
	// Max bounds the resources held at once; 0 holds none.
	Max        int
	Pods       *versioncache.Cache // the node's pods, followed for departures
	PodPresent PodPresent
	// Owners are the service accounts whose pods may own a holding and be
	// its sync identity; the zero value allows none.
	Owners Allowed
	Mint   Minter
	Sync   Syncer
	Store  Store
	// Connected reports whether the cloud is reachable; nil means always.
	// While it is not, a request starting a holding does not wait for it.
	Connected func() bool
	Clock     clock.WithTicker
	Logger    *slog.Logger

	// AtTotalBytes reports whether all holdings for pods hold
	// pod-identity-max-bytes already: no holding starts then. nil never.
	// Guarded by Holdings.mu once New returned (see LimitTotalBytes).
	AtTotalBytes func() bool
}

// Holdings are the resources held for the node's pods' identities. It
// implements door.Holdings. Safe for concurrent use.
type Holdings struct {
	cfg   Config
	log   *slog.Logger
	byGVR map[schema.GroupVersionResource]*holding // immutable after New
	stats *stats

	mu sync.Mutex
	// runCtx is Run's context, nil before Run starts: workers started
	// before then wait for Run, which starts every owned holding.
	// Guarded by mu.
	runCtx context.Context
	// wg joins every worker; Run waits for it.
	wg sync.WaitGroup
}

// holding is one resource that may be held.
type holding struct {
	Held
	// Guarded by Holdings.mu:
	owners map[string]door.Pod // by pod UID
	run    *worker             // the running sync; nil when not syncing
	// last is the most recently started sync, running or stopping; a new
	// one starts only once it has ended. nil before the first.
	last *worker
	// orphaned is when the last owner left while the resource was held;
	// zero while owned or not held. The sync stops then; the data stays
	// for dropGrace.
	orphaned time.Time
	// dropping is set while a drop is in progress: nothing restarts it.
	dropping bool
	// identity is the owner whose token the running sync uses, zero
	// until one is minted and after the cloud refused it; identityToken
	// is that token, to tell a refusal of it from one of an older token.
	identity      door.Pod
	identityToken string
	// refused are the pods, by UID, the cloud refused (see failover.go),
	// while they are on the node: they never own h again.
	refused map[string]door.Pod
}

// New returns Holdings for cfg's resources; Run starts them.
func New(cfg Config) *Holdings {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Holdings{cfg: cfg, log: cfg.Logger.With("component", "held-for-pods"),
		byGVR: map[schema.GroupVersionResource]*holding{}, stats: newStats()}
	for _, h := range cfg.Resources {
		m.byGVR[h.Resource.GVR] = &holding{Held: h, owners: map[string]door.Pod{}, refused: map[string]door.Pod{}}
	}
	return m
}

// find returns the holding a's resource may be held in, or nil.
func (m *Holdings) find(a requestinfo.Attributes) *holding {
	if !a.ResourceRequest || a.Subresource != "" {
		return nil
	}
	return m.byGVR[schema.GroupVersionResource{Group: a.Group, Version: a.Version, Resource: a.Resource}]
}

// ForPods reports whether a reads a resource that may be held for pods
// and that the node's scope does not sync in part: the node's identity
// then has no view of it of its own.
func (m *Holdings) ForPods(a requestinfo.Attributes) bool {
	h := m.find(a)
	return h != nil && !h.Widens
}

// Authorized makes pod an owner of a's resource when a lists or watches
// it cluster-wide and pod's service account is allowed to own holdings,
// and starts holding it if it is not held. The request that starts a
// holding waits up to firstListWait for it to serve; others are forwarded
// until it does. Any other pod's read changes nothing: it is served from
// the holding if there is one, else forwarded.
func (m *Holdings) Authorized(ctx context.Context, pod door.Pod, a requestinfo.Attributes) {
	h := m.find(a)
	if h == nil || a.Namespace != "" || (a.Verb != "list" && a.Verb != "watch") {
		return
	}
	if !m.cfg.Owners.Allows(pod.Namespace, pod.ServiceAccount) || !m.cfg.PodPresent(pod.Namespace, pod.Name, pod.UID) {
		return
	}
	if !m.own(ctx, h, pod) || h.Cache.Ready() || (m.cfg.Connected != nil && !m.cfg.Connected()) {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := m.cfg.Clock.NewTimer(firstListWait)
	defer t.Stop()
	go func() {
		select {
		case <-t.C():
			cancel()
		case <-wctx.Done():
		}
	}()
	_ = h.Cache.WaitForRV(wctx, 1) // not served in time: the request is forwarded
}

// own adds pod to h's owners and starts h if it can. It reports whether
// this call started h.
func (m *Holdings) own(ctx context.Context, h *holding, pod door.Pod) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := h.refused[pod.UID]; ok {
		return false // the cloud refused this pod already: it reads, but does not own
	}
	if _, ok := h.owners[pod.UID]; !ok {
		h.owners[pod.UID] = pod
		if err := m.saveLocked(ctx, h); err != nil {
			m.log.Warn("owner of a holding not stored", "resource", h.Resource.Key(), "err", err)
		}
	}
	h.orphaned = time.Time{}
	if h.run != nil {
		return false
	}
	m.startLocked(h)
	return h.run != nil
}

// HeldFor names the service accounts a resource is held for
// (namespace/name, sorted), or nil.
func (m *Holdings) HeldFor(gvr schema.GroupVersionResource) []string {
	h := m.byGVR[gvr]
	if h == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return serviceAccountsLocked(h)
}

// serviceAccountsLocked names h's owners' service accounts, sorted and
// without repeats. Holdings.mu must be held.
func serviceAccountsLocked(h *holding) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range h.owners {
		sa := p.Namespace + "/" + p.ServiceAccount
		if !seen[sa] {
			seen[sa] = true
			out = append(out, sa)
		}
	}
	sort.Strings(out)
	return out
}
