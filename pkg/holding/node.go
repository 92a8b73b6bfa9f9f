package holding

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVRs node scope syncs or holds.
var (
	PodsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	NodesGVR      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	SecretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	ConfigMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// NodeResources is what the Node authorizer lets system:node:<node>
// list and watch: its pods and own Node, services, runtimeclasses and
// csidrivers; and, held one by one while referenced, secrets and
// configmaps. Namespaces and endpointslices are not readable by a node.
func NodeResources(node string) []cloudsync.Resource {
	return []cloudsync.Resource{
		{GVR: PodsGVR, FieldSelector: "spec.nodeName=" + node},
		{GVR: NodesGVR, FieldSelector: "metadata.name=" + node},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}},
		{GVR: schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}},
		{GVR: schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}},
		{GVR: SecretsGVR, OnDemand: true},
		{GVR: ConfigMapsGVR, OnDemand: true},
	}
}
