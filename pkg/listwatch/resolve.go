package listwatch

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// namespacesSegment introduces a namespaced path: namespaces/{ns}/{resource}.
const namespacesSegment = "namespaces"

// target is a request for a configured resource that is served locally: a
// collection when name is empty, else one object.
type target struct {
	cache     *versioncache.Cache
	gvr       schema.GroupVersionResource
	info      versioncache.Info // discovery info; valid only when hasInfo
	hasInfo   bool
	namespace string // "" for cluster-scoped objects and all-namespace collections
	name      string
	// proto encodes the answer in protobuf; nil for other media types.
	// Set after negotiation.
	proto *encode.Protobuf
	// synced is the part of the resource the cache holds.
	synced scope.Synced
	// view shows the caller the objects; nil shows them as cached.
	view ObjectView
}

// resolve maps the path segments after /api/v1/ or /apis/{g}/{v}/ to a
// local target. It reports false for paths the cloud must answer:
// unconfigured resources, subresources, and shapes the resource's scope does
// not allow. Like kube-apiserver's request info parsing,
// namespaces/{x}/{y} is a namespaced collection only when y is a
// (configured) resource; otherwise it is a subresource of namespace x.
func (s *server) resolve(gv schema.GroupVersion, parts []string) (target, bool) {
	namespace, namespaced := "", false
	if len(parts) >= 3 && parts[0] == namespacesSegment {
		if _, ok := s.resources[gv.WithResource(parts[2])]; !ok {
			return target{}, false
		}
		namespace, namespaced, parts = parts[1], true, parts[2:]
		if namespace == "" {
			return target{}, false
		}
	}
	if len(parts) == 0 || len(parts) > 2 {
		return target{}, false
	}
	for _, p := range parts {
		if p == "" {
			return target{}, false
		}
	}
	gvr := gv.WithResource(parts[0])
	c, ok := s.resources[gvr]
	if !ok {
		return target{}, false
	}
	t := target{cache: c, gvr: gvr, namespace: namespace}
	t.info, t.hasInfo = c.Info()
	if len(parts) == 2 {
		t.name = parts[1]
	}
	if !t.hasInfo {
		// The scope is unknown until discovery info arrives; the request
		// is answered "initializing" rather than guessed.
		return t, true
	}
	if t.info.Namespaced {
		// A namespaced object is only addressable inside its namespace.
		return t, namespaced || t.name == ""
	}
	return t, !namespaced
}

// ready reports whether the target can be served from its cache.
func (t target) ready() bool {
	return t.hasInfo && t.info.Kind != "" && t.cache.Ready()
}

// groupResource is the resource as kube-apiserver names it in errors.
func (t target) groupResource() schema.GroupResource {
	return t.gvr.GroupResource()
}

// groupKind is the kind of the resource's objects.
func (t target) groupKind() schema.GroupKind {
	return schema.GroupKind{Group: t.gvr.Group, Kind: t.info.Kind}
}

// apiVersion is the apiVersion of the resource's objects.
func (t target) apiVersion() string {
	return t.gvr.GroupVersion().String()
}

// resource is what encoding needs to know of the target.
func (t target) resource() encode.Resource {
	return encode.Resource{GVR: t.gvr, Kind: t.info.Kind}
}
