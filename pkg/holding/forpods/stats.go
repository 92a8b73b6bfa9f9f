package forpods

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptions of the holdings, read at scrape time.
var (
	heldDesc = prometheus.NewDesc("apiserver_lite_pod_held_resources",
		"Resources held now for pods on this node on their own identities.", nil, nil)
	holdingDesc = prometheus.NewDesc("apiserver_lite_pod_holding",
		"1 for each service account a resource is held for; staleness is the resource's apiserver_lite_staleness_seconds.",
		[]string{"resource", "service_account"}, nil)
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
	ch <- refusedDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.m.Report() {
		for _, sa := range r.ServiceAccounts {
			ch <- prometheus.MustNewConstMetric(holdingDesc, prometheus.GaugeValue, 1, r.Resource, sa)
		}
	}
	ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(c.m.running()))
	c.m.stats.mu.Lock()
	defer c.m.stats.mu.Unlock()
	for res, n := range c.m.stats.refused {
		ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(n), res)
	}
}
