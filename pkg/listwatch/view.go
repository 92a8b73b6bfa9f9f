package listwatch

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// View picks, per request, how the objects of a resource are shown to its
// caller: nil shows them as cached. It lets one identity see an object
// rewritten (the node's kubelet reading default/kubernetes pointed at the
// local door) while every other caller sees the cloud's.
type View func(ctx context.Context, gvr schema.GroupVersionResource) ObjectView

// ObjectView returns the object to show for a cached one: the same pointer
// when unchanged. Its result must keep the object's name, namespace and
// resourceVersion, so lists, watches and continue tokens stay consistent.
type ObjectView func(*versioncache.Object) *versioncache.Object

// viewFor is the request's object view; nil without a configured View.
func (s *server) viewFor(ctx context.Context, gvr schema.GroupVersionResource) ObjectView {
	if s.view == nil {
		return nil
	}
	return s.view(ctx, gvr)
}

// seeObject is o as v shows it.
func seeObject(v ObjectView, o *versioncache.Object) *versioncache.Object {
	if v == nil || o == nil {
		return o
	}
	return v(o)
}

// seeObjects is objs as v shows them; objs is shared with the cache, so a
// changed object goes into a copy of the slice.
func seeObjects(v ObjectView, objs []*versioncache.Object) []*versioncache.Object {
	if v == nil {
		return objs
	}
	out := objs
	for i, o := range objs {
		if seen := v(o); seen != o {
			if &out[0] == &objs[0] {
				out = append([]*versioncache.Object(nil), objs...)
			}
			out[i] = seen
		}
	}
	return out
}

// seeEvent is ev with its object as v shows it. A changed object's frames
// are encoded for this watcher alone (see versioncache.Event.Frame).
func seeEvent(v ObjectView, ev versioncache.Event) versioncache.Event {
	if v == nil || ev.Object == nil {
		return ev
	}
	ev.Object = v(ev.Object)
	return ev
}
