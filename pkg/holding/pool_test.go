package holding

import (
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
