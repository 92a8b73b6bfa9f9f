package forpods

import (
	"context"
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The node's holdings as the doors, the local API and the run loop see
// them; each takes nil holdings (none configured, or the node's pods not
// synced) and returns nil, never a typed nil, for none.

// DoorHoldings is the doors' view of both kinds of holdings.
func DoorHoldings(h *Holdings, ns *Namespaced) door.Holdings {
	switch {
	case ns != nil:
		return Joined{Cluster: h, Namespaced: ns}
	case h != nil:
		return h
	}
	return nil
}

// RunnerOf is h's Run, or nil.
func RunnerOf(h *Holdings) func(context.Context) error {
	if h == nil {
		return nil
	}
	return h.Run
}

// CurrentOf is h's Current, or nil.
func CurrentOf(h *Holdings) func(schema.GroupVersionResource) bool {
	if h == nil {
		return nil
	}
	return h.Current
}

// NamespacedRunnerOf is ns's Run, or nil.
func NamespacedRunnerOf(ns *Namespaced) func(context.Context) error {
	if ns == nil {
		return nil
	}
	return ns.Run
}

// RouteNamespaced serves ns's reads before next; next alone without ns.
func RouteNamespaced(ns *Namespaced, next http.Handler) http.Handler {
	if ns == nil {
		return next
	}
	return ns.Route(next)
}

// DoorHeld reports a read as held, for the doors' stored decisions, when
// held (the synced resources') says so or ns holds it in a namespace;
// held alone without ns.
func DoorHeld(held func(requestinfo.Attributes) bool, ns *Namespaced) func(requestinfo.Attributes) bool {
	if ns == nil {
		return held
	}
	return func(a requestinfo.Attributes) bool { return held(a) || ns.Holds(a) }
}
