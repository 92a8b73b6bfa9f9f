package listwatch

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// serveList answers a list with the cache's snapshot. The body is built
// from the objects' cached JSON without decoding them.
func (s *server) serveList(w http.ResponseWriter, r *http.Request, t target, req *listRequest) {
	tbl, err := parseTable(r, t)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.awaitRV(r.Context(), t.cache, req.rv); err != nil {
		writeError(w, err)
		return
	}
	objs, rv, err := t.cache.List(req.pred)
	if err != nil {
		writeError(w, cacheError(err))
		return
	}
	if req.exact && rv != req.rv {
		// Only the current state is kept, and it is newer than asked for.
		writeError(w, errExpired(req.rv, rv))
		return
	}
	if tbl != nil {
		s.writeTable(w, tbl, objs, rv)
		return
	}
	writeList(w, t, objs, rv)
}

// writeList writes {"kind":"<Kind>List","apiVersion":...,"metadata":
// {"resourceVersion":"<rv>"},"items":[...]} with the items' raw JSON.
func writeList(w http.ResponseWriter, t target, objs []*versioncache.Object, rv uint64) {
	parts := make([][]byte, 0, 2*len(objs)+2)
	parts = append(parts, listHead(t.info.Kind+"List", t.apiVersion(), rv))
	for i, o := range objs {
		if i > 0 {
			parts = append(parts, comma)
		}
		parts = append(parts, o.Raw)
	}
	parts = append(parts, listTail)
	writeJSON(w, parts...)
}

var (
	comma    = []byte{','}
	listTail = []byte("]}\n")
)

// listHead is a list body up to and including the opening of items.
func listHead(kind, apiVersion string, rv uint64) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"apiVersion":`...)
	b = appendJSONString(b, apiVersion)
	b = append(b, `,"metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rv, 10)
	return append(b, `"},"items":[`...)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// writeJSON writes a 200 JSON body made of parts, with its length.
func writeJSON(w http.ResponseWriter, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	h := w.Header()
	h.Set("Content-Type", contentTypeJSON)
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return // the client went away
		}
	}
}
