package holding

import (
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NodeNameVar in a configured selector stands for this node's name; see
// ForNode.
const NodeNameVar = "${NODE_NAME}"

// ClusterDefaults is cluster scope's default resource list: what a
// kubelet reads (its pods and node, the objects its pods reference, and
// its lease) and what kube-proxy and CoreDNS read for service routing
// (services, endpointslices, namespaces and servicecidrs). Selectors hold
// NodeNameVar.
func ClusterDefaults() []cloudsync.Resource {
	core := func(r string) cloudsync.Resource {
		return cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: r}}
	}
	gvr := func(group, r string) cloudsync.Resource {
		return cloudsync.Resource{GVR: schema.GroupVersionResource{Group: group, Version: "v1", Resource: r}}
	}
	lease := gvr("coordination.k8s.io", "leases")
	lease.Namespace = "kube-node-lease"
	return []cloudsync.Resource{
		{GVR: PodsGVR, FieldSelector: "spec.nodeName=" + NodeNameVar},
		{GVR: NodesGVR, FieldSelector: "metadata.name=" + NodeNameVar},
		core("namespaces"), core("services"), core("configmaps"), core("secrets"),
		core("persistentvolumeclaims"), core("persistentvolumes"),
		gvr("discovery.k8s.io", "endpointslices"),
		gvr("networking.k8s.io", "servicecidrs"),
		gvr("storage.k8s.io", "csidrivers"),
		gvr("storage.k8s.io", "csinodes"),
		gvr("node.k8s.io", "runtimeclasses"),
		lease,
	}
}

// ForNode returns r with NodeNameVar in its selectors replaced by node.
func ForNode(r cloudsync.Resource, node string) cloudsync.Resource {
	r.LabelSelector = strings.ReplaceAll(r.LabelSelector, NodeNameVar, node)
	r.FieldSelector = strings.ReplaceAll(r.FieldSelector, NodeNameVar, node)
	return r
}
