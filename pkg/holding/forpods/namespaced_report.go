package forpods

import (
	"net/http"
	"sort"
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ScopeNamespace is the scope of a namespaced holding, as status shows it.
const ScopeNamespace = "namespace"

// NamespacedHolding is one namespaced holding's state, for status and
// metrics.
type NamespacedHolding struct {
	Resource  string `json:"resource"` // group/version/resource
	Namespace string `json:"namespace"`
	Key       string `json:"key"` // the stored resource's key
	Scope     string `json:"scope"`
	// Held is true while the resource is synced for its owners.
	Held bool `json:"held"`
	// Stopped says why a holding with owners is not synced.
	Stopped         string   `json:"stopped,omitempty"`
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	Pods            []string `json:"pods,omitempty"`
	// SyncIdentity is the pod whose bound token the sync uses.
	SyncIdentity string `json:"syncIdentity,omitempty"`
	Objects      int    `json:"objects"`
	Bytes        int64  `json:"bytes"`
}

// Report lists the namespaced holdings, by key.
func (m *Namespaced) Report() []NamespacedHolding {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]NamespacedHolding, 0, len(m.byKey))
	for k, h := range m.byKey {
		st := h.cache.Stats()
		r := NamespacedHolding{Resource: gvrString(k.gvr), Namespace: k.ns,
			Key: h.res.Key(), Scope: ScopeNamespace, Held: h.run != nil, Stopped: h.stopped,
			ServiceAccounts: nsServiceAccountsLocked(h), Objects: st.Objects, Bytes: st.Bytes}
		if r.Held {
			r.SyncIdentity = h.identity
		}
		for _, p := range h.owners {
			r.Pods = append(r.Pods, p.Namespace+"/"+p.Name)
		}
		sort.Strings(r.Pods)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// gvrString spells gvr as pod-identity-resources does: group/version/
// resource, version/resource for the core group.
func gvrString(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Version + "/" + gvr.Resource
	}
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}

// Route serves a caller's request for a resource held in its namespace
// from that holding while it is synced; every other request, and every
// request of the node's own identity (whose view a holding never widens),
// goes to next.
func (m *Namespaced) Route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if api := m.serving(r); api != nil {
			api.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serving is the local API of the holding r reads, or nil.
func (m *Namespaced) serving(r *http.Request) http.Handler {
	if !m.cfg.Authorized(r) {
		return nil
	}
	a := requestinfo.Resolve(r)
	if !a.ResourceRequest || a.Namespace == "" {
		return nil
	}
	key := nsKey{schema.GroupVersionResource{Group: a.Group, Version: a.Version, Resource: a.Resource}, a.Namespace}
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.byKey[key]
	if h == nil || h.run == nil || h.api == nil || !h.cache.Ready() {
		return nil
	}
	return h.api
}

// AuthorizedPerRequest reports whether r's caller was authorized by the
// cloud for this very request: not the node's own identity (whose view a
// holding never widens) nor the insecure door's callers.
func AuthorizedPerRequest(r *http.Request) bool {
	if _, ok := caller.UserFrom(r.Context()); !ok {
		return false
	}
	rt, err := caller.ForwardTransport(r.Context())
	return rt != nil || err != nil
}

// Metric descriptions of the namespaced holdings, read at scrape time.
var (
	nsHoldingDesc = prometheus.NewDesc("apiserver_lite_pod_namespaced_holding",
		"1 for each resource held in a namespace for that namespace's pods, per owner service account; "+
			"sync_identity is the pod whose token it syncs on, empty while not synced; staleness is "+
			"apiserver_lite_staleness_seconds of its key.",
		[]string{"resource", "namespace", "key", "service_account", "sync_identity"}, nil)
	nsObjectsDesc = prometheus.NewDesc("apiserver_lite_pod_namespaced_holding_objects",
		"Objects held in a namespace for its pods, per resource.", []string{"resource", "namespace"}, nil)
	nsBytesDesc = prometheus.NewDesc("apiserver_lite_pod_namespaced_holding_bytes",
		"JSON bytes held in a namespace for its pods, per resource.", []string{"resource", "namespace"}, nil)
	nsRefusedDesc = prometheus.NewDesc("apiserver_lite_pod_holding_cap_refusals_total",
		"Times a holding in a namespace was not started or was stopped at a cap; its reads went back to the cloud.",
		[]string{"namespace", "cap"}, nil)
)

// nsStats counts refusals by namespace and cap. Safe for concurrent use.
type nsStats struct {
	mu      sync.Mutex
	refused map[[2]string]uint64 // guarded by mu
}

func newNSStats() *nsStats { return &nsStats{refused: map[[2]string]uint64{}} }

func (s *nsStats) refuse(ns, cap string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[[2]string{ns, cap}]++
}

// Refusals returns how often ns was refused at cap.
func (m *Namespaced) Refusals(ns, cap string) uint64 {
	m.stats.mu.Lock()
	defer m.stats.mu.Unlock()
	return m.stats.refused[[2]string{ns, cap}]
}

// Collector returns the namespaced holdings' metrics.
func (m *Namespaced) Collector() prometheus.Collector { return nsCollector{m} }

type nsCollector struct{ m *Namespaced }

func (c nsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nsHoldingDesc
	ch <- nsObjectsDesc
	ch <- nsBytesDesc
	ch <- nsRefusedDesc
}

func (c nsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.m.Report() {
		for _, sa := range r.ServiceAccounts {
			ch <- prometheus.MustNewConstMetric(nsHoldingDesc, prometheus.GaugeValue, 1, r.Resource, r.Namespace, r.Key, sa, r.SyncIdentity)
		}
		ch <- prometheus.MustNewConstMetric(nsObjectsDesc, prometheus.GaugeValue, float64(r.Objects), r.Resource, r.Namespace)
		ch <- prometheus.MustNewConstMetric(nsBytesDesc, prometheus.GaugeValue, float64(r.Bytes), r.Resource, r.Namespace)
	}
	c.m.stats.mu.Lock()
	defer c.m.stats.mu.Unlock()
	for k, n := range c.m.stats.refused {
		ch <- prometheus.MustNewConstMetric(nsRefusedDesc, prometheus.CounterValue, float64(n), k[0], k[1])
	}
}

// Holds reports whether a's resource is held in a's namespace, synced or
// not: the reads whose authorization decisions the doors may store for
// offline use. Safe on a nil Namespaced (nothing is held).
func (m *Namespaced) Holds(a requestinfo.Attributes) bool {
	if m == nil || !a.ResourceRequest || a.Namespace == "" {
		return false
	}
	key := nsKey{schema.GroupVersionResource{Group: a.Group, Version: a.Version, Resource: a.Resource}, a.Namespace}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byKey[key] != nil
}
