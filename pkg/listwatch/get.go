package listwatch

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// serveGet answers a get of one object with its cached JSON.
func (s *server) serveGet(w http.ResponseWriter, r *http.Request, t target) {
	rv, err := parseGet(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	tbl, err := parseTable(r, t)
	if err != nil {
		writeError(w, err)
		return
	}
	if r.URL.Query().Get("resourceVersion") == "" {
		s.awaitWrites(r.Context(), t.cache)
	}
	if err := s.awaitRV(r.Context(), t.cache, rv); err != nil {
		writeError(w, err)
		return
	}
	obj, _, err := t.cache.Get(t.namespace, t.name)
	if err != nil {
		writeError(w, cacheError(err))
		return
	}
	if obj == nil {
		writeError(w, apierrors.NewNotFound(t.groupResource(), t.name))
		return
	}
	if tbl != nil {
		s.writeTable(w, tbl, []*versioncache.Object{obj}, obj.RV)
		return
	}
	if t.proto != nil {
		b, err := t.proto.object(obj)
		if err != nil {
			writeError(w, apierrors.NewInternalError(err))
			return
		}
		writeBody(w, mediaTypeProtobuf, b)
		return
	}
	writeJSON(w, obj.Raw, []byte{'\n'})
}
