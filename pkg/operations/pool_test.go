package operations

import (
	"bytes"
	"testing"
)

func TestRenderPool(t *testing.T) {
	doc := Status{Resources: []ResourceStatus{
		{Resource: "services", Key: "/v1/services", Upstream: "pool:edge-a",
			UpstreamBytes: map[string]int64{"pool:edge-a": 300, "cloud": 12}},
		{Resource: "pods", Key: "/v1/pods"},
	}}
	var out bytes.Buffer
	if err := renderPool(&out, doc); err != nil {
		t.Fatal(err)
	}
	want := "\nPOOL      UPSTREAM     BYTES\nservices  pool:edge-a  cloud=12 pool:edge-a=300\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := renderPool(&out, Status{Resources: []ResourceStatus{{Resource: "pods"}}}); err != nil || out.Len() != 0 {
		t.Errorf("without a pool: %q, %v; want nothing", out.String(), err)
	}
}

func TestPoolStatus(t *testing.T) {
	o := &View{}
	rs := ResourceStatus{Key: "/v1/services"}
	o.poolStatus(&rs)
	if rs.Upstream != "" {
		t.Errorf("without a pool: upstream %q", rs.Upstream)
	}
	o.ObservePool(func(key string) (string, map[string]int64, bool) {
		return "pool:edge-a", map[string]int64{"pool:edge-a": 5}, key == "/v1/services"
	})
	o.poolStatus(&rs)
	if rs.Upstream != "pool:edge-a" || rs.UpstreamBytes["pool:edge-a"] != 5 {
		t.Errorf("got %q %v, want pool:edge-a with 5 bytes", rs.Upstream, rs.UpstreamBytes)
	}
}
