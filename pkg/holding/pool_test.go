package holding

import (
	"context"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func TestPoolWide(t *testing.T) {
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	slices := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	res := []cloudsync.Resource{
		{GVR: PodsGVR, FieldSelector: "spec.nodeName=n1"},
		{GVR: nodes, FieldSelector: "metadata.name=n1"},
		{GVR: services},
		{GVR: secrets, OnDemand: true},
		{GVR: secrets}, // cluster scope's whole secrets: still never pooled
		{GVR: slices, ForPods: true},
		{GVR: namespaces, ForPods: true},
		{GVR: nodes, ForPods: true},
		{GVR: PodsGVR, ForPods: true},
	}
	synced := map[schema.GroupVersionResource]bool{slices: true, nodes: true, PodsGVR: true}
	serves := PoolWide(res, func(gvr schema.GroupVersionResource) bool { return synced[gvr] })
	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		want bool
	}{
		{services, true},
		{slices, true},
		{namespaces, false}, // held for pods, but no owner syncs it
		{nodes, true},       // the whole copy, synced
		{secrets, false},
		{PodsGVR, false},
		{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, false},
	} {
		t.Run(tc.gvr.String(), func(t *testing.T) {
			if got := serves(tc.gvr); got != tc.want {
				t.Errorf("PoolWide(%s) = %v, want %v", tc.gvr, got, tc.want)
			}
		})
	}
	if PoolWide(res, nil)(slices) {
		t.Error("without holdings for pods, EndpointSlices are served")
	}
}

// namedLW is a ListerWatcher known by its name; it is never called.
type namedLW string

func (namedLW) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, nil
}

func (namedLW) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, nil
}

func TestUpstream(t *testing.T) {
	services := cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}}
	ownPods := cloudsync.Resource{GVR: PodsGVR, FieldSelector: "spec.nodeName=n1"}
	slices := cloudsync.Resource{GVR: schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, ForPods: true}
	res := []cloudsync.Resource{services, ownPods, slices}
	leader := func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
		return namedLW("leader")
	}
	for _, tc := range []struct {
		name   string
		leader func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext
		r      cloudsync.Resource
		want   namedLW
	}{
		{"services held whole, from the leader", leader, services, "leader"},
		{"the node's own pods, from the cloud", leader, ownPods, "cloud"},
		{"held for pods: its owner's sync picks", leader, slices, "cloud"},
		{"no pool", nil, services, "cloud"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Upstream(res, tc.leader)(tc.r, namedLW("cloud")); got != tc.want {
				t.Errorf("upstream of %s: got %v, want %v", tc.r.Key(), got, tc.want)
			}
		})
	}
}
