package pool

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/kubernetes/fake"
)

func TestStatsVisible(t *testing.T) {
	s := NewStats()
	const res = "discovery.k8s.io/v1/endpointslices?forPods=true"
	s.use(res, UpstreamCloud)
	s.AddBytes(res, UpstreamCloud, 100)
	s.use(res, "pool:edge-a")
	s.AddBytes(res, "pool:edge-a", 250)
	s.fallback(res, "expired")

	got, ok := s.Describe(res)
	if want := "upstream pool:edge-a; bytes cloud=100 pool:edge-a=250"; !ok || got != want {
		t.Errorf("Describe = %q, %v; want %q", got, ok, want)
	}
	if _, ok := s.Describe("v1/namespaces"); ok {
		t.Error("a resource never read is described")
	}

	e, err := New(Config{Pool: "site-a", Namespace: "apiserver-lite-pool", Self: Holder{"edge-b", "10.0.0.2:10552"},
		Leases: fake.NewClientset().CoordinationV1(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	e.observe("edge-a@10.0.0.1:10552")
	want := `
# HELP apiserver_lite_pool_leader 1 for the member the pool's Lease names; self is true when it is this one.
# TYPE apiserver_lite_pool_leader gauge
apiserver_lite_pool_leader{leader="edge-a",pool="site-a",self="false"} 1
# HELP apiserver_lite_pool_upstream 1 for the upstream a pool-wide resource is read from now: cloud, or pool:<leader node>.
# TYPE apiserver_lite_pool_upstream gauge
apiserver_lite_pool_upstream{resource="discovery.k8s.io/v1/endpointslices?forPods=true",upstream="pool:edge-a"} 1
# HELP apiserver_lite_pool_upstream_bytes_total Bytes of a pool-wide resource read from each upstream (response bodies).
# TYPE apiserver_lite_pool_upstream_bytes_total counter
apiserver_lite_pool_upstream_bytes_total{resource="discovery.k8s.io/v1/endpointslices?forPods=true",upstream="cloud"} 100
apiserver_lite_pool_upstream_bytes_total{resource="discovery.k8s.io/v1/endpointslices?forPods=true",upstream="pool:edge-a"} 250
`
	if err := testutil.CollectAndCompare(Collector(e, s), strings.NewReader(want),
		"apiserver_lite_pool_leader", "apiserver_lite_pool_upstream", "apiserver_lite_pool_upstream_bytes_total"); err != nil {
		t.Error(err)
	}
}
