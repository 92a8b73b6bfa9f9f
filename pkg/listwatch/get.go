package listwatch

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// serveGet answers a get of one object with its cached encoding. Like
// kube-apiserver, invalid Table options are reported only once the object
// was read.
func (s *server) serveGet(w http.ResponseWriter, r *http.Request, t target, resp response.Responder, rt route) {
	rv, err := parseGet(r.URL.Query())
	if err != nil {
		resp.Error(w, err)
		return
	}
	if r.URL.Query().Get("resourceVersion") == "" {
		s.awaitWrites(r.Context(), t.cache)
	}
	if err := s.awaitRV(r.Context(), t.cache, rv); err != nil {
		resp.Error(w, err)
		return
	}
	obj, _, err := t.cache.Get(t.namespace, t.name)
	if err != nil {
		resp.Error(w, response.CacheError(err))
		return
	}
	if obj == nil {
		s.serveMissing(w, r, resp, t, rt)
		return
	}
	s.writeObject(w, t, resp, seeObject(t.view, obj))
}

// writeObject answers a get with obj in the negotiated form.
func (s *server) writeObject(w http.ResponseWriter, t target, resp response.Responder, obj *versioncache.Object) {
	if p := resp.Partial(); p != nil {
		s.writePartialObject(w, t, resp, p, obj)
		return
	}
	if tbl := resp.Table(); tbl != nil {
		s.writeTable(w, resp, encode.NewTable(tbl, t.groupResource()), []*versioncache.Object{obj}, obj.RV)
		return
	}
	if t.proto != nil {
		b, err := t.proto.Object(obj)
		if err != nil {
			resp.Error(w, apierrors.NewInternalError(err))
			return
		}
		resp.Body(w, b)
		return
	}
	resp.Body(w, obj.Raw, []byte{'\n'})
}

// serveMissing answers a get of an object the cache does not hold, as
// decide routed it: kube's 404 when the synced scope holds every object of
// that name, else the cloud's answer, or 503 while the cloud is
// unreachable: the object may exist there (a pod on another node).
func (s *server) serveMissing(w http.ResponseWriter, r *http.Request, resp response.Responder, t target, rt route) {
	switch rt.why {
	case reasonHeld:
		resp.Error(w, apierrors.NewNotFound(t.groupResource(), t.name))
	case reasonHeldOrCloud:
		s.serveProxy(w, r)
	default:
		resp.Error(w, response.CloudUnavailable())
	}
}

// writePartialObject answers a get with the object's PartialObjectMetadata,
// or with kube's 406 when a list was asked for.
func (s *server) writePartialObject(w http.ResponseWriter, t target, resp response.Responder, p *response.Partial, obj *versioncache.Object) {
	if p.List {
		resp.Error(w, response.NotAcceptableMessage(fmt.Sprintf(
			"you requested PartialObjectMetadataList, but the requested object is not a list (%s)", encode.TypeName(t.resource(), false))))
		return
	}
	b, err := encode.NewPartial(p, resp.MediaType()).Object(obj.Raw)
	if err != nil {
		resp.Error(w, apierrors.NewInternalError(err))
		return
	}
	resp.Body(w, b)
}
