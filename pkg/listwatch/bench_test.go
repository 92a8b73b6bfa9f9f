package listwatch

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// benchPods is the size of the pod set the list benchmarks serve: a large
// edge node's worth of pods plus headroom.
const benchPods = 1000

// BenchmarkListPods measures a full LIST through the HTTP handler, with and
// without a field selector, as the kubelet and informers issue it.
func BenchmarkListPods(b *testing.B) {
	raws := make([]string, benchPods)
	for i := range raws {
		raws[i] = podJSON("ns", fmt.Sprintf("pod-%04d", i), uint64(i+1), fmt.Sprintf("node-%d", i%10), "Running", map[string]string{"app": fmt.Sprint(i % 7)})
	}
	pods := MustCache(b, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, benchPods+1, raws...)
	h, err := New(Config{Caches: []*versioncache.Cache{pods}, Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{"", "?fieldSelector=spec.nodeName%3Dnode-3", "?labelSelector=app%3D3"} {
		b.Run("query="+q, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/pods"+q, nil)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("got %d, want 200", rec.Code)
				}
				b.SetBytes(int64(rec.Body.Len()))
			}
		})
	}
}
