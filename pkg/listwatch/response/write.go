package response

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gzipThreshold is the body size, in bytes, above which kube-apiserver
// gzips an answer for a client that accepts it (responsewriters'
// defaultGzipThresholdBytes, 128 KiB).
const gzipThreshold = 128 * 1024

// WriteError writes err as a JSON metav1.Status whose HTTP status is its
// code, with Retry-After when the status carries a retry hint. Handlers
// that negotiated a media type write errors with Responder.Error instead.
func WriteError(w http.ResponseWriter, err error) {
	st := ToStatus(err)
	writeStatus(w, MediaTypeJSON, st, append(MarshalStatus(st), '\n'))
}

// writeStatus writes body, st encoded as contentType, with st's code.
func writeStatus(w http.ResponseWriter, contentType string, st metav1.Status, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	if d := st.Details; d != nil && d.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(body)
}

// WriteJSON writes a 200 JSON body made of parts, with its length.
func WriteJSON(w http.ResponseWriter, parts ...[]byte) {
	WriteBody(w, MediaTypeJSON, false, parts...)
}

// WriteBody writes a 200 body of the given content type made of parts.
// When gzipOK and the body exceeds gzipThreshold it is gzipped as
// kube-apiserver does; otherwise it is sent with its length.
func WriteBody(w http.ResponseWriter, contentType string, gzipOK bool, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	if gzipOK && n > gzipThreshold {
		writeGzip(w, parts)
		return
	}
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return // the client went away
		}
	}
}

// writeGzip writes parts gzipped at kube-apiserver's level (1: least CPU).
func writeGzip(w http.ResponseWriter, parts [][]byte) {
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	w.WriteHeader(http.StatusOK)
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return // BestSpeed is a valid level
	}
	for _, p := range parts {
		if _, err := zw.Write(p); err != nil {
			return // the client went away
		}
	}
	_ = zw.Close()
}

// WriteText writes a plain-text answer (the health endpoints).
func WriteText(w http.ResponseWriter, code int, body string) {
	h := w.Header()
	h.Set("Content-Type", ContentTypeText)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// AddWarning adds a Kubernetes warning (RFC 7234 warning code 299, no
// agent), which client-go logs and kubectl prints, to the answer's headers.
func AddWarning(w http.ResponseWriter, text string) {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	w.Header().Add("Warning", `299 - "`+r.Replace(text)+`"`)
}
