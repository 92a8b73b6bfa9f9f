package listwatch

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/scope"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// A resource the sync holds in part (node scope's own Node, the node's
// pods) may also be held whole for the node's pods (a CNI agent lists
// every Node on its own service account): the whole copy is a second
// cache, held on request (see Config.Widened). A caller the door
// authorized for the very request, other than the node, reads the whole
// copy while it is held and current; the node's own identity keeps its
// partial view, exactly as without it.

// addWidened records the whole copies of partially synced resources.
func (s *server) addWidened(caches []*versioncache.Cache) error {
	s.widened = make(map[schema.GroupVersionResource]*versioncache.Cache, len(caches))
	for _, c := range caches {
		if c == nil {
			return errors.New("nil widened cache")
		}
		gvr := c.GVR()
		if _, ok := s.resources[gvr]; !ok {
			return errors.New("widened cache of unconfigured resource " + gvr.String())
		}
		if _, dup := s.widened[gvr]; dup {
			return errors.New("resource " + gvr.String() + " widened twice")
		}
		s.widened[gvr] = c
		s.onRequest[c] = true
	}
	return nil
}

// widen points t at its resource's whole copy when the request may read
// it: a caller other than the node, the copy held, and current while the
// cloud is reachable.
func (s *server) widen(ctx context.Context, t target) target {
	w := s.widened[t.gvr]
	if w == nil || !w.Ready() || s.nodeCaller(ctx) || (s.cloudReachable() && !s.current(t.gvr)) {
		return t
	}
	info, ok := w.Info()
	if !ok {
		return t
	}
	t.cache, t.info, t.hasInfo, t.synced = w, info, true, scope.Synced{}
	return t
}

// actsAsNode reports whether the request is the node's own (or no door
// authorized it for itself): it gets the node's view.
func actsAsNode(ctx context.Context) bool {
	rt, err := caller.ForwardTransport(ctx)
	return rt == nil && !errors.Is(err, caller.ErrNotForwardable)
}

// narrowerThanAsked is the offline answer to a list or watch that asks
// for more than t holds: 503, never the partial set, which an informer
// would take for the whole whatever Warning it carried.
func narrowerThanAsked(t target) error {
	err := response.CloudUnavailable()
	var st *apierrors.StatusError
	if errors.As(err, &st) {
		st.ErrStatus.Message = "the cloud API server is unreachable, and this node holds only the synced " +
			t.synced.Describe(t.gvr.GroupResource().String()) + ": a wider list or watch is answered by the cloud alone"
	}
	return err
}
