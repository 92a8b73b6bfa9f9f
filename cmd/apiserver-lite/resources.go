package main

import (
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

// syncResources are the configured resources for the node (holding.Configured).
func syncResources(c config) ([]cloudsync.Resource, error) {
	res := make([]cloudsync.Resource, len(c.Resources))
	for i, rc := range c.Resources {
		res[i] = cloudsync.Resource{GVR: schema.GroupVersionResource{Group: rc.Group, Version: rc.Version, Resource: rc.Resource},
			Namespace: rc.Namespace, LabelSelector: rc.LabelSelector, FieldSelector: rc.FieldSelector}
	}
	return holding.Configured(res, c.NodeName)
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
