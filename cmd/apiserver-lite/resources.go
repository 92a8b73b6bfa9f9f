package main

import (
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// defaultResources is cluster scope's default resource list (see
// holding.ClusterDefaults) in the config's form.
func defaultResources() []resourceConfig {
	defaults := holding.ClusterDefaults()
	out := make([]resourceConfig, 0, len(defaults))
	for _, r := range defaults {
		out = append(out, resourceConfig{Group: r.GVR.Group, Version: r.GVR.Version, Resource: r.GVR.Resource,
			Namespace: r.Namespace, LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector})
	}
	return out
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
		out = append(out, holding.ForNode(cloudsync.Resource{
			GVR:           gvr,
			Namespace:     rc.Namespace,
			LabelSelector: rc.LabelSelector,
			FieldSelector: rc.FieldSelector,
		}, c.NodeName))
	}
	return out, nil
}

// syncScopes is what the local API holds of each synced resource, so it
// sends reads of anything wider to the cloud. A whole copy held for pods
// beside a partial sync is the local API's Widened, not a scope.
func syncScopes(res []cloudsync.Resource) map[schema.GroupVersionResource]listwatch.Scope {
	out := make(map[schema.GroupVersionResource]listwatch.Scope, len(res))
	for _, r := range res {
		if holding.Widens(r, res) {
			continue
		}
		out[r.GVR] = listwatch.Scope{Namespace: r.Namespace, LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector,
			Partial: r.OnDemand, OnRequest: r.ForPods}
	}
	return out
}
