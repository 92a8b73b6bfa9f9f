package cloudsync

import (
	"context"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
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
	k := r.GVR.Group + "/" + r.GVR.Version + "/" + r.GVR.Resource
	if len(q) > 0 {
		k += "?" + q.Encode()
	}
	return k
}

// InfoKey is the metastore meta key holding the resource's discovery
// information, so an offline restart can still serve it.
func (r Resource) InfoKey() string { return "info/" + r.Key() }

// NewListerWatcher lists and watches r through the dynamic client, applying
// r's namespace and selectors to every request.
func NewListerWatcher(client dynamic.Interface, r Resource) cache.ListerWatcherWithContext {
	ri := client.Resource(r.GVR).Namespace(r.Namespace)
	narrow := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector = r.LabelSelector
		o.FieldSelector = r.FieldSelector
		return o
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ri.List(ctx, narrow(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, narrow(o))
		},
	}
}
