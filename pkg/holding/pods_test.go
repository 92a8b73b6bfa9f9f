package holding

import (
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHeldPod(t *testing.T) {
	pods := versioncache.New(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, 10)
	obj, err := versioncache.NewObject([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"p",` +
		`"uid":"u1","resourceVersion":"5"}}`))
	if err != nil {
		t.Fatal(err)
	}
	lookup := HeldPod([]*versioncache.Cache{pods})
	if lookup("a", "p", "u1") {
		t.Fatal("found a pod before the cache is ready")
	}
	pods.Replace([]*versioncache.Object{obj}, 5)
	for _, tc := range []struct {
		ns, name, uid string
		want          bool
	}{{"a", "p", "u1", true}, {"a", "p", "u2", false}, {"a", "q", "u1", false}, {"b", "p", "u1", false}} {
		if got := lookup(tc.ns, tc.name, tc.uid); got != tc.want {
			t.Errorf("lookup(%s, %s, %s): got %v, want %v", tc.ns, tc.name, tc.uid, got, tc.want)
		}
	}
	if HeldPod(nil)("a", "p", "u1") {
		t.Fatal("found a pod without a pods cache")
	}
}

// A whole copy of every pod, held for pods after the node's own pods
// cache, never makes another node's pod a caller here.
func TestHeldPodReadsTheNodesPodsOnly(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	own, whole := versioncache.New(gvr, 10), versioncache.New(gvr, 10)
	elsewhere, err := versioncache.NewObject([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"p",` +
		`"uid":"u1","resourceVersion":"5"}}`))
	if err != nil {
		t.Fatal(err)
	}
	own.Replace(nil, 5)
	whole.Replace([]*versioncache.Object{elsewhere}, 5)
	if HeldPod([]*versioncache.Cache{own, whole})("a", "p", "u1") {
		t.Fatal("got another node's pod found in the whole copy, want only the node's pods read")
	}
}
