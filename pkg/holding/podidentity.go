package holding

import (
	"fmt"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultPodIdentityResources is what the node's system components read
// on their own identities (kube-proxy, DNS, CNI agents) and may be held for
// them: pod-identity-resources by default. Secrets and configmaps are never
// in it: they are held only if an operator lists them.
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
// node's pods: every one that synced (the scope's own resources) does not
// already hold, whole and cluster-wide. A resource the scope syncs in part
// (node scope's own Node) stays forwarded beyond that part. Without the
// node's pods synced none is: who holds what follows them.
func PodHeldResources(list []string, synced []cloudsync.Resource) ([]cloudsync.Resource, error) {
	have := map[schema.GroupVersionResource]bool{}
	for _, r := range synced {
		have[r.GVR] = true
	}
	if !have[PodsGVR] {
		return nil, nil
	}
	var out []cloudsync.Resource
	for _, s := range list {
		gvr, err := ParseGVR(s)
		if err != nil {
			return nil, fmt.Errorf("pod-identity-resources: %w", err)
		}
		if have[gvr] || gvr == PodsGVR {
			continue // the pods held are the node's; others' stay the cloud's
		}
		have[gvr] = true
		out = append(out, cloudsync.Resource{GVR: gvr, ForPods: true})
	}
	return out, nil
}
