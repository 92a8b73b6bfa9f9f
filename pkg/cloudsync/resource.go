package cloudsync

import (
	"net/url"

	"github.com/apiserver-lite/apiserver-lite/pkg/startup"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is one configured resource to keep in sync: a GVR, optionally
// narrowed to a namespace and by selectors (already expanded, e.g. with the
// node name).
type Resource struct {
	GVR           schema.GroupVersionResource
	Namespace     string
	LabelSelector string
	FieldSelector string
	// OnDemand marks a kind that is not listed: single objects are held
	// while referenced (see Demand). Its stored state is kept apart from a
	// listed copy of the same GVR.
	OnDemand bool
	// ForPods marks a resource held only while pods on this node read it
	// on their own identities (see pkg/holding/forpods): it is listed and
	// watched on a token bound to such a pod, not on the node's identity,
	// and its stored state is kept apart from a configured copy.
	ForPods bool
}

// Key identifies the resource's stored state. It covers the selectors and
// namespace too, so a configuration change starts from a fresh list rather
// than from objects that no longer match.
func (r Resource) Key() string {
	q := url.Values{}
	if r.Namespace != "" {
		q.Set("namespace", r.Namespace)
	}
	if r.LabelSelector != "" {
		q.Set("labelSelector", r.LabelSelector)
	}
	if r.FieldSelector != "" {
		q.Set("fieldSelector", r.FieldSelector)
	}
	if r.OnDemand {
		q.Set("onDemand", "true")
	}
	if r.ForPods {
		q.Set("forPods", "true")
	}
	k := r.GVR.Group + "/" + r.GVR.Version + "/" + r.GVR.Resource
	if len(q) > 0 {
		k += "?" + q.Encode()
	}
	return k
}

// InfoKey is the metastore meta key holding the resource's discovery
// information, so an offline restart can still serve it.
func (r Resource) InfoKey() string { return "info/" + r.Key() }

// Stored names r for startup.LoadCaches.
func (r Resource) Stored() startup.Resource {
	return startup.Resource{GVR: r.GVR, Key: r.Key(), InfoKey: r.InfoKey()}
}

// StoredOf names each of res for startup.Prepare, in res's order.
func StoredOf(res []Resource) []startup.Resource {
	out := make([]startup.Resource, len(res))
	for i, r := range res {
		out[i] = r.Stored()
	}
	return out
}
