//go:build e2e

package fleet

import (
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// TestParseCloudBytes reads the byte counters the fleet report sums.
func TestParseCloudBytes(t *testing.T) {
	metrics := `# HELP apiserver_response_sizes Response size distribution in bytes
apiserver_response_sizes_sum{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 1000
apiserver_response_sizes_sum{component="apiserver",group="",resource="secrets",scope="namespace",subresource="",verb="LIST",version="v1"} 24
apiserver_response_sizes_sum{component="apiserver",group="",resource="leases",scope="resource",subresource="",verb="GET",version="v1"} 300
apiserver_response_sizes_sum{component="apiserver",group="",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 7000
apiserver_response_sizes_sum{component="apiserver",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 9000
apiserver_response_sizes_count{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 3
apiserver_watch_events_sizes_sum{group="",kind="Pod",version="v1"} 50
apiserver_watch_events_sizes_sum{group="",kind="Secret",version="v1"} 6
`
	got, err := parseCloudBytes([]byte(metrics))
	if err != nil {
		t.Fatal(err)
	}
	want := cloudBytes{list: 1024, get: 300, watch: 56}
	if got != want {
		t.Errorf("parseCloudBytes: got %+v, want %+v", got, want)
	}
	if _, err := parseCloudBytes([]byte(`apiserver_watch_events_sizes_sum{kind="Pod"} x`)); err == nil {
		t.Error("parseCloudBytes of a bad value: got no error, want one")
	}
}

// TestParseDaemonWatches reads a daemon's open cloud watches and held
// secrets and configmaps, which a lite node's start waits for.
func TestParseDaemonWatches(t *testing.T) {
	metrics := `# HELP apiserver_lite_cloud_watches Watches the daemon holds open on the cloud.
# TYPE apiserver_lite_cloud_watches gauge
apiserver_lite_cloud_watches 64
# HELP apiserver_storage_objects Objects held for the resource.
# TYPE apiserver_storage_objects gauge
apiserver_storage_objects{resource="configmaps"} 30
apiserver_storage_objects{resource="nodes"} 1
apiserver_storage_objects{resource="pods"} 30
apiserver_storage_objects{resource="secrets"} 29
apiserver_lite_cloud_link_up 1
`
	untyped := "apiserver_lite_cloud_watches 5\napiserver_storage_objects{resource=\"secrets\"} 2\n"
	got, err := parseDaemonWatches([]byte(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if want := (daemonWatches{open: 64, held: 59}); got != want {
		t.Errorf("parseDaemonWatches: got %+v, want %+v", got, want)
	}
	if got, err := parseDaemonWatches([]byte(untyped)); err != nil || got != (daemonWatches{open: 5, held: 2}) {
		t.Errorf("parseDaemonWatches without TYPE lines: got %+v, %v, want {open:5 held:2}", got, err)
	}
	if _, err := parseDaemonWatches([]byte("apiserver_lite_cloud_watches x\n")); err == nil {
		t.Error("parseDaemonWatches of a bad value: got no error, want one")
	}
}

// TestCountConnsTo counts the established connections to one port.
func TestCountConnsTo(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:A000 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:A001 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:A002 0100007F:1F90 06 00000000:00000000 00:00000000 00000000     0        0 0 3 0000000000000000
   4: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 20 4 30 10 -1
   5: 0100007F:A003 0100007F:1F91 01 00000000:00000000 00:00000000 00000000     0        0 5 1 0000000000000000 20 4 30 10 -1
`
	for _, tt := range []struct {
		name string
		port int
		want int
	}{{"cloud port", 0x1F90, 2}, {"other port", 0x1F91, 1}, {"no connection", 0x1F92, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := countConnsTo([]byte(table), tt.port); got != tt.want {
				t.Errorf("countConnsTo(%d): got %d, want %d", tt.port, got, tt.want)
			}
		})
	}
}

// TestSpreadOf is the median and range the rounds are reported with.
func TestSpreadOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		xs   []float64
		want spread
	}{
		{"none", nil, spread{}},
		{"one", []float64{2}, spread{2, 2, 2}},
		{"odd", []float64{3, 1, 2}, spread{2, 1, 3}},
		{"even", []float64{4, 1, 2, 3}, spread{2.5, 1, 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := spreadOf(tt.xs); got != tt.want {
				t.Errorf("spreadOf(%v): got %+v, want %+v", tt.xs, got, tt.want)
			}
		})
	}
}

// TestFleetReport: the report carries the rounds, the restarts of both
// sides, the verdicts and the model, and reads the Lease verdict from the
// results.
func TestFleetReport(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(r *fleetResults)
		want   []string
	}{
		{"sound", func(*fleetResults) {}, []string{"| round 1 | 1.00 | 1.00 |", "kubelet read set direct | 10 |",
			"Model of 10000 nodes", "| steady state: open cloud watches | 3.33  | 33333  |", "no failed Lease renewal | yes (0 failed) |"}},
		{"lease failures counted", func(r *fleetResults) { r.enterPhase(lease.DaemonRestart); r.leaseFails[bench.LiteSide].Add(2) },
			[]string{"no failed Lease renewal | **no** (2 failed) |"}},
		{"restart lists a held object", func(r *fleetResults) { r.rebootLists.single = 1 },
			[]string{"at most 1 `limit=1` check per node | **no** (0 relists, 1 single-object of held objects"}},
		{"restart streams a held object", func(r *fleetResults) { r.rebootLists.streams = 1 },
			[]string{"at most 1 `limit=1` check per node | **no** (0 relists, 0 single-object of held objects, 1 streaming watches of held objects"}},
		{"restart reads only the new pods' objects", func(r *fleetResults) { r.reboot.lists.single, r.reboot.lists.streams = 6, 4 },
			[]string{"at most 1 `limit=1` check per node | yes (0 relists, 0 single-object of held objects, 0 streaming watches of held objects, at most 0 checks answered (0 more refused with 429 and retried); all told 6 single-object LISTs and 4 streaming watches"}},
		{"restart table counts streams", func(r *fleetResults) { r.cloudRestart.lists.streams = 7 },
			[]string{"apiserver-lite on every node | 10 | 0 | 0 | 7 | 0 |"}},
		{"cloud restart counted until its watches were back", func(r *fleetResults) {
			r.cloudRestart.watchesBack, r.directRestart.watchesBack = 12*time.Second, 0
		}, []string{"until its open watches were back to 99% of before (apiserver-lite 12s, direct 0s after the cloud was ready; 0s: not within 2m0s)"}},
		{"lease failures in another phase", func(r *fleetResults) { r.enterPhase(lease.CloudRestart); r.leaseFails[bench.LiteSide].Add(2) },
			[]string{"no failed Lease renewal | yes (0 failed) |"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := soundFleet()
			tt.mutate(r)
			wantInReport(t, r, tt.want...)
		})
	}
}

// FuzzFleetParsers: the fleet report's parsers of kube-apiserver's
// metrics and /proc/net/tcp never panic (pprof's summary: see package
// profile).
func FuzzFleetParsers(f *testing.F) {
	f.Add([]byte("apiserver_watch_events_sizes_sum{kind=\"Pod\"} 5\n"))
	f.Add([]byte("   1: 0100007F:A000 0100007F:1F90 01 0\n"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = parseCloudBytes(data)
		_ = countConnsTo(data, 0x1F90)
	})
}
