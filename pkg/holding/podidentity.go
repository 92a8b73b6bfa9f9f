package holding

import (
	"fmt"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultPodIdentityResources is what the node's system components read
// on their own identities (kube-proxy, DNS, CNI agents) and may be held for
// them: pod-identity-resources by default. Nodes are in it (a CNI agent
// such as flannel lists every Node to route to its peers; in node scope
// they are held whole beside the node's own Node); pods are not (every
// pod of the cluster is the largest list there is): an operator adds
// v1/pods for a CNI agent that needs them. Secrets and configmaps are
// never in it: they are held only if an operator lists them.
var DefaultPodIdentityResources = []string{
	"v1/services",
	"v1/endpoints",
	"discovery.k8s.io/v1/endpointslices",
	"v1/namespaces",
	"v1/nodes",
	"networking.k8s.io/v1/servicecidrs",
	"networking.k8s.io/v1/ingressclasses",
	"networking.k8s.io/v1/networkpolicies",
}

// DefaultMaxPodHeldResources bounds the resources held for pods at once:
// the defaults list eight, and each held resource costs one cloud watch and
// its objects in memory.
const DefaultMaxPodHeldResources = 16

// ParseGVR parses "group/version/resource", or "version/resource" for the
// core group, as pod-identity-resources lists them.
func ParseGVR(s string) (schema.GroupVersionResource, error) {
	parts := strings.Split(s, "/")
	for _, p := range parts {
		if p == "" {
			return schema.GroupVersionResource{}, fmt.Errorf("%q: want group/version/resource or v1/resource", s)
		}
	}
	switch len(parts) {
	case 2:
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}, nil
	case 3:
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("%q: want group/version/resource or v1/resource", s)
}

// PodHeldResources returns the resources of list that may be held for the
// node's pods, whole and cluster-wide: every one that synced (the scope's
// own resources) does not hold, and every one it syncs only in part by a
// selector or namespace (node scope's own Node and pods), held whole
// beside the node's partial view (widened). One held by name (node
// scope's secrets and configmaps) is not widened. Without the node's pods
// synced none is: who holds what follows them.
func PodHeldResources(list []string, synced []cloudsync.Resource) ([]cloudsync.Resource, error) {
	have := map[schema.GroupVersionResource]cloudsync.Resource{}
	for _, r := range synced {
		have[r.GVR] = r
	}
	if _, ok := have[PodsGVR]; !ok {
		return nil, nil
	}
	seen := map[schema.GroupVersionResource]bool{}
	var out []cloudsync.Resource
	for _, s := range list {
		gvr, err := ParseGVR(s)
		if err != nil {
			return nil, fmt.Errorf("pod-identity-resources: %w", err)
		}
		if r, ok := have[gvr]; seen[gvr] || (ok && !heldInPart(r)) {
			continue
		}
		seen[gvr] = true
		out = append(out, cloudsync.Resource{GVR: gvr, ForPods: true})
	}
	return out, nil
}

// heldInPart reports whether r syncs part of its resource chosen by a
// selector or namespace.
func heldInPart(r cloudsync.Resource) bool {
	return !r.OnDemand && (r.Namespace != "" || r.LabelSelector != "" || r.FieldSelector != "")
}

// Widens reports whether r, held for pods, is the whole copy of a
// resource synced reports synced in part.
func Widens(r cloudsync.Resource, synced []cloudsync.Resource) bool {
	if !r.ForPods {
		return false
	}
	for _, s := range synced {
		if s.GVR == r.GVR && !s.ForPods {
			return true
		}
	}
	return false
}
