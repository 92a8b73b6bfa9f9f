package holding

import (
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCachesByHolder(t *testing.T) {
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	slices := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	res := []cloudsync.Resource{
		{GVR: PodsGVR, FieldSelector: "spec.nodeName=n1"},
		{GVR: NodesGVR, FieldSelector: "metadata.name=n1"},
		{GVR: NodesGVR, ForPods: true},
		{GVR: ConfigMapsGVR, OnDemand: true},
		{GVR: services},
		{GVR: slices, ForPods: true},
	}
	caches := make([]*versioncache.Cache, len(res))
	for i, r := range res {
		caches[i] = versioncache.New(r.GVR, 1)
	}
	if got := NodePods(res, caches); got != caches[0] {
		t.Errorf("NodePods: got %p, want the node's pods' cache %p", got, caches[0])
	}
	main, widened := SplitWidened(res, caches)
	if len(widened) != 1 || widened[0] != caches[2] || len(main) != len(res)-1 {
		t.Errorf("SplitWidened: got %d main and %v widened, want the whole Nodes copy alone widened", len(main), widened)
	}
	whole := ServedWhole(res, caches)
	for _, tc := range []struct {
		name string
		gvr  schema.GroupVersionResource
		want bool
	}{
		{"synced without selectors", services, true},
		{"synced by a selector", PodsGVR, false},
		{"held by reference", ConfigMapsGVR, false},
		{"held for pods, not yet held", slices, false},
		{"not synced", SecretsGVR, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := whole(tc.gvr, "ns"); got != tc.want {
				t.Errorf("ServedWhole(%s): got %v, want %v", tc.gvr.Resource, got, tc.want)
			}
		})
	}
}

// The local API is told the held part of each resource, and nothing of a
// whole copy held for pods beside the node's part (its Widened).
func TestLocalScopes(t *testing.T) {
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	slices := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	res := []cloudsync.Resource{
		{GVR: PodsGVR, FieldSelector: "spec.nodeName=n1"},
		{GVR: NodesGVR, FieldSelector: "metadata.name=n1"},
		{GVR: NodesGVR, ForPods: true},
		{GVR: ConfigMapsGVR, OnDemand: true},
		{GVR: services, Namespace: "default", LabelSelector: "a=b"},
		{GVR: slices, ForPods: true},
	}
	got := LocalScopes(res)
	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		want scope.Held
	}{
		{PodsGVR, scope.Held{FieldSelector: "spec.nodeName=n1"}},
		{NodesGVR, scope.Held{FieldSelector: "metadata.name=n1"}},
		{ConfigMapsGVR, scope.Held{Partial: true}},
		{services, scope.Held{Namespace: "default", LabelSelector: "a=b"}},
		{slices, scope.Held{OnRequest: true}},
	} {
		t.Run(tc.gvr.Resource, func(t *testing.T) {
			if g, ok := got[tc.gvr]; !ok || g != tc.want {
				t.Errorf("got %+v (%v), want %+v", g, ok, tc.want)
			}
		})
	}
	if len(got) != 5 {
		t.Errorf("got %d scopes, want 5: one per GVR, the widened Nodes copy left out", len(got))
	}
}
