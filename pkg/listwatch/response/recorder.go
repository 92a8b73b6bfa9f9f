package response

import (
	"bytes"
	"net/http"
)

// Recorder passes a response through to its ResponseWriter and keeps a
// copy of up to Limit bytes of the body, so a handler wrapping the cloud
// proxy can store what the cloud answered.
type Recorder struct {
	http.ResponseWriter
	// Limit is the most body bytes kept; a longer body sets Overflow.
	Limit int
	// Status is the response code, 0 until one is written.
	Status int
	// Overflow is set once the body exceeded Limit; Body is then partial.
	Overflow bool
	buf      bytes.Buffer
}

// Body is the kept copy of the body.
func (r *Recorder) Body() []byte { return r.buf.Bytes() }

// WriteHeader records the first status code and passes it on.
func (r *Recorder) WriteHeader(code int) {
	if r.Status == 0 {
		r.Status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write keeps b while the copy stays within Limit, and passes it on.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	if r.buf.Len()+len(b) > r.Limit {
		r.Overflow = true
	} else {
		r.buf.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// Flush passes flushes through (the proxy flushes streamed answers).
func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
