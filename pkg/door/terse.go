package door

import (
	"io"
	"net/http"
	"strings"
)

// serveTerse serves an anonymous health request: a passing check answers
// "ok" as h writes it, a failing one only "<name> check failed", never the
// per-check lines (link state, holdings, keys) h writes on failure; those
// are for authorized callers (?verbose).
func serveTerse(w http.ResponseWriter, r *http.Request, h http.Handler) {
	h.ServeHTTP(&terseWriter{ResponseWriter: w, name: strings.TrimPrefix(r.URL.Path, "/")}, r)
}

// terseWriter drops the body of a failing answer for a one-line verdict.
type terseWriter struct {
	http.ResponseWriter
	name   string
	failed bool
}

func (t *terseWriter) WriteHeader(code int) {
	if code < http.StatusBadRequest {
		t.ResponseWriter.WriteHeader(code)
		return
	}
	t.failed = true
	t.Header().Del("Content-Length")
	t.ResponseWriter.WriteHeader(code)
	_, _ = io.WriteString(t.ResponseWriter, t.name+" check failed\n")
}

func (t *terseWriter) Write(b []byte) (int, error) {
	if t.failed {
		return len(b), nil
	}
	return t.ResponseWriter.Write(b)
}
