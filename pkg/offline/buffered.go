package offline

import (
	"bytes"
	"net/http"
)

// buffered holds a whole answer of the wrapped handler, so that a failed
// forward can be replaced by a stored answer before anything reaches the
// client. TokenRequest answers are small; beyond maxBody the rest is
// still kept (the answer must reach the client whole) but overflow is set
// and it is never stored.
type buffered struct {
	header   http.Header
	status   int // 0 until written
	body     bytes.Buffer
	overflow bool
}

func newBuffered() *buffered { return &buffered{header: http.Header{}} }

func (b *buffered) Header() http.Header { return b.header }

func (b *buffered) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *buffered) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.overflow = b.overflow || b.body.Len()+len(p) > maxBody
	return b.body.Write(p)
}

// copyTo writes the held answer to w.
func (b *buffered) copyTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
