package main

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
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
