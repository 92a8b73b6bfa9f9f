package listwatch

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
		s.writeTable(w, resp, newTableRequest(tbl, t), pg.Objects, pg.RV)
		return
	}
	meta := listMeta{rv: pg.RV}
	if pg.Next != "" {
		meta.next = encodeContinue(pg.Next, int64(pg.RV))
		// Like kube, count what is left only when every object matches.
		if req.pred.Label == nil || req.pred.Label.Empty() {
			if req.pred.Field == nil || req.pred.Field.Empty() {
				meta.remaining = &pg.Remaining
			}
		}
	}
	if t.proto != nil {
		parts, err := t.proto.list(pg.Objects, meta)
		if err != nil {
			resp.Error(w, apierrors.NewInternalError(err))
			return
		}
		resp.Body(w, parts...)
		return
	}
	resp.Body(w, listJSON(t, pg.Objects, meta)...)
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
	var tooOld *versioncache.TooOldError
	switch {
	case errors.As(err, &tooOld) && req.opts.Continue != "":
		return pg, response.ContinueExpired(encodeContinue(req.start, continueLatestRV))
	case errors.As(err, &tooOld):
		return pg, response.ListExpired()
	case err != nil:
		return pg, response.CacheError(err)
	}
	return pg, nil
}

// listMeta is a list's metadata.
type listMeta struct {
	rv        uint64
	next      string // metadata.continue; "" for the last page
	remaining *int64 // metadata.remainingItemCount; nil when unknown
}

// listJSON returns the parts of {"kind":"<Kind>List","apiVersion":...,
// "metadata":{"resourceVersion":"<rv>"[,"continue":...]
// [,"remainingItemCount":n]},"items":[...]} with the items' raw JSON.
func listJSON(t target, objs []*versioncache.Object, meta listMeta) [][]byte {
	parts := [][]byte{listHead(t.info.Kind+"List", t.apiVersion(), meta)}
	parts = append(parts, listItems(t, objs)...)
	return append(parts, listTail)
}

var (
	comma    = []byte{','}
	listTail = []byte("]}\n")
)

// listHead is a list body up to and including the opening of items.
func listHead(kind, apiVersion string, meta listMeta) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	b = append(b, `,"metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, meta.rv, 10)
	b = append(b, '"')
	if meta.next != "" {
		b = append(b, `,"continue":`...)
		b = appendJSONString(b, meta.next)
	}
	if meta.remaining != nil {
		b = append(b, `,"remainingItemCount":`...)
		b = strconv.AppendInt(b, *meta.remaining, 10)
	}
	return append(b, `},"items":[`...)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
