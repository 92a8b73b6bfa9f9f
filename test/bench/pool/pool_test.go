//go:build e2e

package pool

import (
	"bytes"
	"errors"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"os"
	"testing"
	"time"
)

// TestBenchPool is `make bench-pool`: each pool size of BENCH_POOL_SIZES
// on its own cloud, written to the Markdown file BENCH_POOL_REPORT names.
func TestBenchPool(t *testing.T) {
	report := os.Getenv(envPoolReport)
	if report == "" {
		t.Skipf("%s is unset; run make bench-pool", envPoolReport)
	}
	sizes, err := poolSizesFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writePoolHeader(&b, bench.ReadMachine())
	for _, n := range sizes {
		var r *poolResults
		t.Run(poolMemberName(n), func(t *testing.T) {
			r = runPool(t, poolConfigOf(n))
			if err := errors.Join(r.check()...); err != nil {
				t.Errorf("the run produced unsound figures:\n%v", err)
			}
		})
		r.writeMarkdown(&b)
	}
	t.Logf("\n%s", b.String())
	if err := os.WriteFile(report, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// soundPool returns a pool of 10's results that meet every goal.
func soundPool() *poolResults {
	side := func(bytes int64, watches int) poolSide {
		return poolSide{link: linkCount{up: bytes / 4, down: bytes - bytes/4}, window: time.Minute,
			watches: map[string]int{"endpointslices": watches, "pods": 10}, updates: 600, election: 40}
	}
	return &poolResults{cfg: poolConfigOf(10), unpooled: side(10<<20, 60), pooled: side(1<<20, 6),
		electionRequestBytes: 900, failover: 2 * time.Second}
}

// TestPoolVerdicts shows that each verdict fails on figures that miss its
// goal, and only then.
func TestPoolVerdicts(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(r *poolResults)
		failed int // which verdict fails, -1 none
	}{
		{"every goal met", func(*poolResults) {}, -1},
		{"bytes cut 85%", func(r *poolResults) { r.pooled.link = linkCount{up: 1 << 20, down: (10<<20)*15/100 - 1<<20} }, 0},
		{"bytes cut 90% a minute, but the churn sagged", func(r *poolResults) { r.pooled.updates = 500 }, 0},
		{"unpooled counted nothing", func(r *poolResults) { r.unpooled.link = linkCount{} }, 0},
		{"watches cut 80%", func(r *poolResults) { r.pooled.watches = map[string]int{"endpointslices": 12, "pods": 10} }, 1},
		{"per-node watches do not count", func(r *poolResults) { r.pooled.watches = map[string]int{"endpointslices": 6, "pods": 10, "nodes": 10} }, -1},
		{"failover 11 s", func(r *poolResults) { r.failover = 11 * time.Second }, 2},
		{"a follower never recovered", func(r *poolResults) { r.notRecovered = []string{"pool-003"} }, 2},
		{"an update missed", func(r *poolResults) { r.missed = 1 }, 3},
		{"a follower listed", func(r *poolResults) { r.followerLists = []string{"system:node:pool-001 /api/v1/pods"} }, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := soundPool()
			tt.mutate(r)
			for i, v := range r.verdicts() {
				if want := i != tt.failed; v.met != want {
					t.Errorf("verdict %q: got met=%v, want %v (%s)", v.goal, v.met, want, v.figures)
				}
			}
		})
	}
}

// TestPoolVerdictsSmallPool shows that a pool below goalPoolMembers is
// not judged on the cut, only on the failover.
func TestPoolVerdictsSmallPool(t *testing.T) {
	r := soundPool()
	r.cfg.Members = 3
	r.pooled = r.unpooled
	if got, want := len(r.verdicts()), 3; got != want {
		t.Fatalf("got %d verdicts, want %d", got, want)
	}
	for _, v := range r.verdicts() {
		if !v.met {
			t.Errorf("verdict %q: got not met, want met (%s)", v.goal, v.figures)
		}
	}
}

// TestParseWatchesByResource reads open watches by resource from a
// kube-apiserver exposition.
func TestParseWatchesByResource(t *testing.T) {
	body := []byte(`# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{component="apiserver",group="discovery.k8s.io",resource="endpointslices",scope="cluster",subresource="",verb="WATCH",version="v1"} 3
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 2
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 1
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="log",verb="CONNECT",version="v1"} 4
`)
	got, err := bench.ParseWatchesByResource(body)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[string]int{"endpointslices": 3, "pods": 3} {
		if got[r] != want {
			t.Errorf("%s: got %d open watches, want %d", r, got[r], want)
		}
	}
}
