package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"
)

// The store's size, its file system's room and the state key are read at
// every scrape; relist bytes and failed authentications add up.
func TestNodeMetrics(t *testing.T) {
	tests := []struct {
		name   string
		src    Sources
		want   []string
		absent []string
	}{{
		name: "sealed store with its file system",
		src: Sources{
			Store:  func() (StoreStats, bool) { return StoreStats{Bytes: 4096, FSAvailable: 1 << 20, FSSize: 1 << 30}, true },
			Sealed: func() bool { return true },
		},
		want: []string{`apiserver_lite_store_bytes 4096`, `apiserver_lite_store_filesystem_available_bytes 1.048576e+06`,
			`apiserver_lite_store_filesystem_size_bytes 1.073741824e+09`, `apiserver_lite_encryption_key_missing 0`},
	}, {
		name: "no key, file system unknown",
		src: Sources{
			Store:  func() (StoreStats, bool) { return StoreStats{Bytes: 12}, true },
			Sealed: func() bool { return false },
		},
		want:   []string{`apiserver_lite_store_bytes 12`, `apiserver_lite_encryption_key_missing 1`},
		absent: []string{`apiserver_lite_store_filesystem_size_bytes `, `apiserver_lite_store_filesystem_available_bytes `},
	}, {
		name:   "store unreadable, no key source",
		src:    Sources{Store: func() (StoreStats, bool) { return StoreStats{}, false }},
		want:   []string{`apiserver_lite_encryption_key_missing 1`},
		absent: []string{`apiserver_lite_store_bytes `},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := scrape(t, New(clocktesting.NewFakeClock(time.Unix(0, 0)), tt.src))
			mustContain(t, body, tt.want...)
			for _, a := range tt.absent {
				if strings.Contains(body, "\n"+a) {
					t.Errorf("got a %q sample, want none", a)
				}
			}
		})
	}
}

func TestRelistBytesAndAuthFailuresAddUp(t *testing.T) {
	m := New(clocktesting.NewFakeClock(time.Unix(0, 0)), Sources{})
	m.RelistBytes(pods, 1000)
	m.RelistBytes(pods, 24)
	m.RelistBytes("services", 0)
	m.AuthFailed("tls")
	m.AuthFailed("tls")
	m.AuthFailed("loopback")
	mustContain(t, scrape(t, m),
		`apiserver_lite_relist_bytes_total{resource="/v1/pods"} 1024`,
		`apiserver_lite_relist_bytes_total{resource="services"} 0`,
		`apiserver_lite_authentication_failures_total{door="tls"} 2`,
		`apiserver_lite_authentication_failures_total{door="loopback"} 1`)
}

// Describe names every metric, also a label vector never observed, which
// a scrape leaves out; a collector registered later is included.
func TestDescribeNamesUnobservedVectors(t *testing.T) {
	m := New(clocktesting.NewFakeClock(time.Unix(0, 0)), Sources{})
	extra := prometheus.NewGauge(prometheus.GaugeOpts{Name: "extra_gauge", Help: "x"})
	m.MustRegister(extra)
	names := map[string]bool{}
	ch := make(chan *prometheus.Desc)
	go func() { m.Describe(ch); close(ch) }()
	for d := range ch {
		names[descName(d)] = true
	}
	body := scrape(t, m)
	for _, n := range []string{"apiserver_lite_relist_bytes_total", "apiserver_lite_authentication_failures_total",
		"apiserver_lite_store_bytes", "apiserver_lite_encryption_key_missing", "apiserver_request_total", "extra_gauge",
		"process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"} {
		if !names[n] {
			t.Errorf("Describe lacks %s", n)
		}
	}
	if strings.Contains(body, "apiserver_lite_relist_bytes_total{") {
		t.Errorf("a scrape shows relist bytes before any relist; the point of Describe is that it does not")
	}
}

// descName is d's fully-qualified name, which Desc shows only in String.
func descName(d *prometheus.Desc) string {
	s := d.String()
	const key = `fqName: "`
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = s[i+len(key):]
	return s[:strings.IndexByte(s, '"')]
}
