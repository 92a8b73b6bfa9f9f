package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Descriptions of the metrics read at scrape time.
var (
	descRV = prometheus.NewDesc("apiserver_watch_cache_resource_version",
		"The resource's watermark: every cloud change up to this resourceVersion is durable and served.",
		[]string{"resource"}, nil)
	descStaleness = prometheus.NewDesc("apiserver_lite_staleness_seconds",
		"Seconds since the resource last heard from the cloud (an event, a bookmark or a list), or since the daemon started if it never did; absent for a resource held for pods that is not held.",
		[]string{"resource"}, nil)
	descObjects = prometheus.NewDesc("apiserver_storage_objects",
		"Objects held for the resource.", []string{"resource"}, nil)
	descEvents = prometheus.NewDesc("apiserver_lite_event_log_events",
		"Events held for local watches of the resource.", []string{"resource"}, nil)
	descWatchers = prometheus.NewDesc("apiserver_lite_watchers",
		"Local watchers of the resource.", []string{"resource"}, nil)
	descTooSlow = prometheus.NewDesc("apiserver_terminated_watchers_total",
		"Local watchers closed because they fell behind.", []string{"resource"}, nil)
	descReady = prometheus.NewDesc("apiserver_lite_resource_ready",
		"1 when the resource has data to serve (loaded from disk or listed).", []string{"resource"}, nil)
	descLink = prometheus.NewDesc("apiserver_lite_cloud_link_up",
		"1 while the cloud kube-apiserver is reachable.", nil, nil)
	descCloudWatches = prometheus.NewDesc("apiserver_lite_cloud_watches",
		"Watches the daemon holds open on the cloud kube-apiserver: answered, and not yet ended by either side.", nil, nil)
)

// stateCollector reads the caches and the link at scrape time.
type stateCollector struct {
	m   *Metrics
	src Sources
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRV, descStaleness, descObjects, descEvents, descWatchers, descTooSlow, descReady, descLink, descCloudWatches} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descLink, prometheus.GaugeValue, boolValue(c.src.LinkUp != nil && c.src.LinkUp()))
	if c.src.CloudWatches != nil {
		ch <- prometheus.MustNewConstMetric(descCloudWatches, prometheus.GaugeValue, float64(c.src.CloudWatches()))
	}
	if c.src.Resources == nil {
		return
	}
	for _, r := range c.src.Resources() {
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, r.Resource)
		}
		gauge(descRV, float64(r.RV))
		gauge(descObjects, float64(r.Objects))
		gauge(descEvents, float64(r.Events))
		gauge(descWatchers, float64(r.Watchers))
		gauge(descReady, boolValue(r.Ready))
		ch <- prometheus.MustNewConstMetric(descTooSlow, prometheus.CounterValue, float64(r.TooSlow), r.Resource)
		if !r.Idle {
			age, _ := c.m.Staleness(r.Resource)
			gauge(descStaleness, age.Seconds())
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
