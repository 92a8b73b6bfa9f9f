package listwatch

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Reads outside the held set are answered truthfully: a cache holds only
// the scope its resource is synced with (the kubelet's pods with
// spec.nodeName=<node>), so a read that names more than that is the
// cloud's to answer while it is reachable. Offline, a get of an object
// that is not held is 503 (never an invented 404), and so is a wider list
// or watch: an informer would take the partial set for the whole cluster
// whatever Warning it carried. Only a Table (kubectl printing for a
// person) is answered from what is held, with a Warning naming the scope.

// addScopes records the synced scope of each configured resource.
func (s *server) addScopes(scopes map[schema.GroupVersionResource]Scope) error {
	s.synced = make(map[*versioncache.Cache]scope.Synced, len(scopes))
	s.onRequest = map[*versioncache.Cache]bool{}
	for gvr, sc := range scopes {
		c, ok := s.resources[gvr]
		if !ok {
			return fmt.Errorf("scope of unconfigured resource %q", gvr.String())
		}
		synced, err := scope.New(sc.Namespace, sc.LabelSelector, sc.FieldSelector)
		if err != nil {
			return fmt.Errorf("scope of %q: %w", gvr.String(), err)
		}
		if sc.Partial {
			synced = synced.Partial()
		}
		if sc.OnRequest {
			s.onRequest[c] = true
		}
		s.synced[c] = synced
	}
	return nil
}

// covers reports whether every object r names is within t's synced scope.
// The synced field selector's labels are converted like the request's
// (spec.host is spec.nodeName).
func (t target) covers(r scope.Request) bool {
	synced := t.synced
	if synced.Whole() {
		return true
	}
	if synced.IsPartial() {
		return t.holdsExactly(r)
	}
	if f, err := convertFieldSelector(synced.Field(), t.groupKind()); err == nil {
		synced = synced.WithField(f)
	}
	return synced.Covers(r)
}

// coversMiss reports whether a get of t's object that the cache misses is
// kube's 404: every object of that name would be held. A resource held in
// part by name holds only what pods reference, so a miss there never is.
func (t target) coversMiss() bool {
	if t.synced.IsPartial() {
		return false
	}
	return t.covers(scope.Request{Namespace: t.namespace, Name: t.name})
}

// holdsExactly reports whether r names one object and the cache holds
// it: the only reads of a partially held resource answered locally (the
// kubelet's get and single-object watch of a referenced secret).
func (t target) holdsExactly(r scope.Request) bool {
	name, ok := r.ExactName()
	if !ok || (t.hasInfo && t.info.Namespaced && r.Namespace == "") {
		return false
	}
	obj, _, err := t.cache.Get(r.Namespace, name)
	return err == nil && obj != nil
}

// cloudReachable reports whether a read may go to the cloud now.
func (s *server) cloudReachable() bool {
	return s.cloud != nil && s.connected()
}

// limitedWarning is the Warning of an offline answer limited to t's
// synced scope.
func limitedWarning(t target) string {
	return "the cloud API server is unreachable: this answer is limited to the synced " +
		t.synced.Describe(t.gvr.GroupResource().String())
}
