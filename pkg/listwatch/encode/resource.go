package encode

import "k8s.io/apimachinery/pkg/runtime/schema"

// Resource names what is encoded: a resource and the kind of its objects.
type Resource struct {
	GVR  schema.GroupVersionResource
	Kind string
}

// GroupVersionKind is the kind of the resource's objects.
func (r Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// APIVersion is the apiVersion of the resource's objects.
func (r Resource) APIVersion() string {
	return r.GVR.GroupVersion().String()
}
