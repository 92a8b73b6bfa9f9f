package main

import (
	"fmt"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// nodeNameVar in a selector is replaced by the node name.
const nodeNameVar = "${NODE_NAME}"

// defaultResources is what a kubelet reads: its pods and node, plus the
// objects its pods reference, and its lease; and what kube-proxy and
// CoreDNS read for service routing (services, endpointslices, namespaces
// and servicecidrs).
func defaultResources() []resourceConfig {
	core := func(r string) resourceConfig { return resourceConfig{Version: "v1", Resource: r} }
	pods := core("pods")
	pods.FieldSelector = "spec.nodeName=" + nodeNameVar
	nodes := core("nodes")
	nodes.FieldSelector = "metadata.name=" + nodeNameVar
	return []resourceConfig{
		pods, nodes,
		core("namespaces"), core("services"), core("configmaps"), core("secrets"),
		core("persistentvolumeclaims"), core("persistentvolumes"),
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"},
		{Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs"},
		{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"},
		{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"},
		{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"},
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "kube-node-lease"},
	}
}

// syncResources expands ${NODE_NAME} and checks that each GVR is
// configured once: the local API serves one cache per GVR.
func syncResources(c config) ([]cloudsync.Resource, error) {
	seen := map[schema.GroupVersionResource]bool{}
	out := make([]cloudsync.Resource, 0, len(c.Resources))
	for i, rc := range c.Resources {
		if rc.Version == "" || rc.Resource == "" {
			return nil, fmt.Errorf("resources[%d]: version and resource are required", i)
		}
		gvr := schema.GroupVersionResource{Group: rc.Group, Version: rc.Version, Resource: rc.Resource}
		if seen[gvr] {
			return nil, fmt.Errorf("resources[%d]: %s is configured twice", i, gvr)
		}
		seen[gvr] = true
		out = append(out, cloudsync.Resource{
			GVR:           gvr,
			Namespace:     rc.Namespace,
			LabelSelector: strings.ReplaceAll(rc.LabelSelector, nodeNameVar, c.NodeName),
			FieldSelector: strings.ReplaceAll(rc.FieldSelector, nodeNameVar, c.NodeName),
		})
	}
	return out, nil
}

// syncScopes is what the local API holds of each synced resource, so it
// sends reads of anything wider to the cloud.
func syncScopes(res []cloudsync.Resource) map[schema.GroupVersionResource]listwatch.Scope {
	out := make(map[schema.GroupVersionResource]listwatch.Scope, len(res))
	for _, r := range res {
		out[r.GVR] = listwatch.Scope{Namespace: r.Namespace, LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector,
			Partial: r.OnDemand}
	}
	return out
}
