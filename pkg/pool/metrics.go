package pool

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptions of a pool, read at scrape time.
var (
	upstreamDesc = prometheus.NewDesc("apiserver_lite_pool_upstream",
		"1 for the upstream a pool-wide resource is read from now: cloud, or pool:<leader node>.",
		[]string{"resource", "upstream"}, nil)
	bytesDesc = prometheus.NewDesc("apiserver_lite_pool_upstream_bytes_total",
		"Bytes of a pool-wide resource read from each upstream (response bodies).",
		[]string{"resource", "upstream"}, nil)
	fallbacksDesc = prometheus.NewDesc("apiserver_lite_pool_fallbacks_total",
		"Times a pool-wide resource was read from the cloud because the leader could not serve it, by reason "+
			"(expired: its 410; behind: a too-large resourceVersion; unavailable: anything else).",
		[]string{"resource", "reason"}, nil)
	leaderDesc = prometheus.NewDesc("apiserver_lite_pool_leader",
		"1 for the member the pool's Lease names; self is true when it is this one.",
		[]string{"pool", "leader", "self"}, nil)
)

// Collector is the pool's metrics: e's leader and s's upstreams.
func Collector(e *Elector, s *Stats) prometheus.Collector { return collector{e: e, s: s} }

type collector struct {
	e *Elector
	s *Stats
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upstreamDesc
	ch <- bytesDesc
	ch <- fallbacksDesc
	ch <- leaderDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	if h, ok, self, _ := c.e.Leader(); ok {
		ch <- prometheus.MustNewConstMetric(leaderDesc, prometheus.GaugeValue, 1, c.e.cfg.Pool, h.Node, fmt.Sprint(self))
	}
	for r, st := range c.s.Snapshot() {
		ch <- prometheus.MustNewConstMetric(upstreamDesc, prometheus.GaugeValue, 1, r, st.Upstream)
		for up, n := range st.Bytes {
			ch <- prometheus.MustNewConstMetric(bytesDesc, prometheus.CounterValue, float64(n), r, up)
		}
		for reason, n := range st.Fallbacks {
			ch <- prometheus.MustNewConstMetric(fallbacksDesc, prometheus.CounterValue, float64(n), r, reason)
		}
	}
}

// Describe is one resource's upstream and bytes as a line of /readyz
// ?verbose and status: "upstream pool:edge-a; bytes cloud=10 pool:edge-a=20";
// ok false for a resource never read.
func (s *Stats) Describe(resource string) (string, bool) {
	st, ok := s.Snapshot()[resource]
	if !ok {
		return "", false
	}
	ups := slices.Sorted(func(yield func(string) bool) {
		for up := range st.Bytes {
			if !yield(up) {
				return
			}
		}
	})
	parts := make([]string, 0, len(ups))
	for _, up := range ups {
		parts = append(parts, fmt.Sprintf("%s=%d", up, st.Bytes[up]))
	}
	return "upstream " + st.Upstream + "; bytes " + strings.Join(parts, " "), true
}
