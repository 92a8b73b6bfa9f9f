package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// StoreStats is the store's size and its file system's room, read at
// scrape time.
type StoreStats struct {
	// Bytes is the store's size on disk: the database and its
	// write-ahead log.
	Bytes int64
	// FSAvailable and FSSize are the bytes left to the daemon and the
	// size of the file system holding the store; 0 when unknown.
	FSAvailable, FSSize uint64
}

// Descriptions of the node's store and key, read at scrape time.
var (
	descStoreBytes = prometheus.NewDesc("apiserver_lite_store_bytes",
		"Size of the store on disk: the database and its write-ahead log.", nil, nil)
	descFSAvail = prometheus.NewDesc("apiserver_lite_store_filesystem_available_bytes",
		"Bytes left to the daemon on the file system holding the store.", nil, nil)
	descFSSize = prometheus.NewDesc("apiserver_lite_store_filesystem_size_bytes",
		"Size of the file system holding the store.", nil, nil)
	descKeyMissing = prometheus.NewDesc("apiserver_lite_encryption_key_missing",
		"1 when the daemon runs without a state key: Secrets are stored in plaintext and TokenRequest answers are not kept for offline restarts.",
		nil, nil)
)

// nodeCollector reads the store's size and the state key at scrape time.
type nodeCollector struct{ src Sources }

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStoreBytes, descFSAvail, descFSSize, descKeyMissing} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descKeyMissing, prometheus.GaugeValue, boolValue(c.src.Sealed == nil || !c.src.Sealed()))
	if c.src.Store == nil {
		return
	}
	st, ok := c.src.Store()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(descStoreBytes, prometheus.GaugeValue, float64(st.Bytes))
	if st.FSSize > 0 {
		ch <- prometheus.MustNewConstMetric(descFSAvail, prometheus.GaugeValue, float64(st.FSAvailable))
		ch <- prometheus.MustNewConstMetric(descFSSize, prometheus.GaugeValue, float64(st.FSSize))
	}
}
