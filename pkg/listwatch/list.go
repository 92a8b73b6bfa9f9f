package listwatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// serveList answers a list with one page of the cache's state. The body is
// built from the objects' cached JSON without decoding them.
func (s *server) serveList(w http.ResponseWriter, r *http.Request, t target, req *listRequest, resp response.Responder) {
	if req.opts.ResourceVersion == "" && req.opts.Continue == "" {
		s.awaitWrites(r.Context(), t.cache)
	}
	pg, err := s.listPage(r.Context(), t, req)
	if err != nil {
		resp.Error(w, err)
		return
	}
	if tbl := resp.Table(); tbl != nil {
		s.writeTable(w, resp, encode.NewTable(tbl, t.groupResource()), pg.Objects, pg.RV)
		return
	}
	meta := encode.ListMeta{RV: pg.RV}
	if pg.Next != "" {
		meta.Continue = encode.EncodeContinue(pg.Next, int64(pg.RV))
		// Like kube, count what is left only when every object matches.
		if req.pred.Label == nil || req.pred.Label.Empty() {
			if req.pred.Field == nil || req.pred.Field.Empty() {
				meta.Remaining = &pg.Remaining
			}
		}
	}
	if p := resp.Partial(); p != nil {
		s.writePartialList(w, t, resp, p, pg.Objects, meta)
		return
	}
	if t.proto != nil {
		parts, err := t.proto.List(pg.Objects, meta)
		if err != nil {
			resp.Error(w, apierrors.NewInternalError(err))
			return
		}
		resp.Body(w, parts...)
		return
	}
	resp.Body(w, encode.JSONList(t.resource(), pg.Objects, meta)...)
}

// listPage picks the RV a list is served at the way kube-apiserver's watch
// cache does: a continue token's RV exactly (the latest for a negative
// one), resourceVersionMatch=Exact or a legacy resourceVersion=N with a
// limit exactly, anything else the latest state not older than the asked
// resourceVersion. A page older than the event ring gets kube's 410.
func (s *server) listPage(ctx context.Context, t target, req *listRequest) (versioncache.Page, error) {
	opts := versioncache.PageOptions{Predicate: req.pred, Start: req.start, Limit: req.limit}
	switch {
	case req.contRV > 0:
		opts.RV = uint64(req.contRV)
	case req.contRV == 0 && req.exact:
		opts.RV = req.rv
	}
	if err := s.awaitRV(ctx, t.cache, max(opts.RV, req.rv)); err != nil {
		return versioncache.Page{}, err
	}
	pg, err := t.cache.ListPage(opts)
	pg.Objects = seeObjects(t.view, pg.Objects)
	var tooOld *versioncache.TooOldError
	switch {
	case errors.As(err, &tooOld) && req.opts.Continue != "":
		return pg, response.ContinueExpired(encode.EncodeContinue(req.start, encode.ContinueLatestRV))
	case errors.As(err, &tooOld):
		return pg, response.ListExpired()
	case err != nil:
		return pg, response.CacheError(err)
	}
	return pg, nil
}

// writeTable answers with a Table of objs at rv, or with the error of
// invalid Table options.
func (s *server) writeTable(w http.ResponseWriter, resp response.Responder, tr *encode.Table, objs []*versioncache.Object, rv uint64) {
	if err := tr.Err(); err != nil {
		resp.Error(w, err)
		return
	}
	tbl, err := tr.Convert(objs, rv, s.clock.Now(), true)
	if err != nil {
		resp.Error(w, err)
		return
	}
	resp.Object(w, tbl)
}

// writePartialList answers a list with its PartialObjectMetadataList, or
// with kube's 406 when a single object was asked for.
func (s *server) writePartialList(w http.ResponseWriter, t target, resp response.Responder, p *response.Partial,
	objs []*versioncache.Object, meta encode.ListMeta) {
	if !p.List {
		resp.Error(w, response.NotAcceptableMessage(fmt.Sprintf(
			"you requested PartialObjectMetadata, but the requested object is a list (%s)", encode.TypeName(t.resource(), true))))
		return
	}
	b, err := encode.NewPartial(p, resp.MediaType()).List(objs, meta)
	if err != nil {
		resp.Error(w, apierrors.NewInternalError(err))
		return
	}
	resp.Body(w, b)
}
