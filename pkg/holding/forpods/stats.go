package forpods

import (
	"sync"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptions of the holdings, read at scrape time.
var (
	heldDesc = prometheus.NewDesc("apiserver_lite_pod_held_resources",
		"Resources held now for pods on this node on their own identities.", nil, nil)
	holdingDesc = prometheus.NewDesc("apiserver_lite_pod_holding",
		"1 for each service account a resource is held for; staleness is the resource's apiserver_lite_staleness_seconds.",
		[]string{"resource", "service_account"}, nil)
	identityDesc = prometheus.NewDesc("apiserver_lite_pod_holding_sync_identity",
		"1 for the pod and service account whose token a held resource's sync runs on, with where it is held (scope: cluster).",
		[]string{"resource", "scope", "service_account", "pod"}, nil)
	refusedDesc = prometheus.NewDesc("apiserver_lite_pod_holdings_refused_total",
		"Times a resource was not held for pods because pod-identity-max-resources were held already; its reads stayed the cloud's.",
		[]string{"resource"}, nil)
)

// stats counts refusals. Safe for concurrent use.
type stats struct {
	mu      sync.Mutex
	refused map[string]uint64 // guarded by mu
}

func newStats() *stats { return &stats{refused: map[string]uint64{}} }

func (s *stats) refuse(resource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[resource]++
}

// Collector returns the holdings' metrics, for the daemon's registry.
func (m *Holdings) Collector() prometheus.Collector { return collector{m} }

type collector struct{ m *Holdings }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- heldDesc
	ch <- holdingDesc
	ch <- identityDesc
	ch <- refusedDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.m.Report() {
		for _, sa := range r.ServiceAccounts {
			ch <- prometheus.MustNewConstMetric(holdingDesc, prometheus.GaugeValue, 1, r.Resource, sa)
		}
	}
	for _, id := range c.m.identities() {
		ch <- prometheus.MustNewConstMetric(identityDesc, prometheus.GaugeValue, 1, id.resource, ScopeCluster,
			id.pod.Namespace+"/"+id.pod.ServiceAccount, id.pod.Namespace+"/"+id.pod.Name)
	}
	ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(c.m.running()))
	c.m.stats.mu.Lock()
	defer c.m.stats.mu.Unlock()
	for res, n := range c.m.stats.refused {
		ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(n), res)
	}
}

// identity is a running holding's sync identity.
type identity struct {
	resource string
	pod      door.Pod
}

// identities lists the sync identities of the running holdings.
func (m *Holdings) identities() []identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []identity
	for _, h := range m.byGVR {
		if h.run != nil && h.identityToken != "" {
			out = append(out, identity{resource: h.Resource.Key(), pod: h.identity})
		}
	}
	return out
}
