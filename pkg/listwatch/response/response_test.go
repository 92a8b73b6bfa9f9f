package response

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestAddWarning(t *testing.T) {
	rec := httptest.NewRecorder()
	AddWarning(rec, `limited to "pods" \ node`)
	if got, want := rec.Header().Get("Warning"), `299 - "limited to \"pods\" \\ node"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Errors are written in the negotiated media type, with the code and the
// retry hint.
func TestResponderError(t *testing.T) {
	for _, mt := range []string{MediaTypeJSON, MediaTypeYAML, MediaTypeProtobuf} {
		t.Run(mt, func(t *testing.T) {
			rec := httptest.NewRecorder()
			NewResponder(Negotiated{MediaType: mt}).Error(rec, CloudUnavailable())
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Content-Type") != mt || rec.Header().Get("Retry-After") != "1" {
				t.Fatalf("got %d %q Retry-After %q, want 503 %q 1", rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"), mt)
			}
			obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), rec.Body.Bytes())
			st, ok := obj.(*metav1.Status)
			if err != nil || !ok || st.Code != http.StatusServiceUnavailable || st.Reason != metav1.StatusReasonServiceUnavailable {
				t.Errorf("decode %q: got %#v, %v", rec.Body.String(), obj, err)
			}
		})
	}
}

// A YAML responder converts JSON bodies; large bodies are gzipped when the
// client accepts it.
func TestResponderBody(t *testing.T) {
	rec := httptest.NewRecorder()
	NewResponder(Negotiated{MediaType: MediaTypeYAML}).Body(rec, []byte(`{"kind":"Pod",`), []byte(`"apiVersion":"v1"}`))
	if got, want := rec.Body.String(), "apiVersion: v1\nkind: Pod\n"; got != want || rec.Header().Get("Content-Type") != MediaTypeYAML {
		t.Errorf("got %q %q, want %q", rec.Header().Get("Content-Type"), got, want)
	}
	big := bytes.Repeat([]byte("x"), gzipThreshold+1)
	rec = httptest.NewRecorder()
	NewResponder(Negotiated{MediaType: MediaTypeJSON, Gzip: true}).Body(rec, big)
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("Content-Length") != "" {
		t.Fatalf("got headers %v, want gzip without a length", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	if b, err := io.ReadAll(zr); err != nil || !bytes.Equal(b, big) {
		t.Errorf("got %d bytes, %v, want the body", len(b), err)
	}
	rec = httptest.NewRecorder()
	NewResponder(Negotiated{MediaType: MediaTypeJSON, Gzip: true}).Body(rec, big[:gzipThreshold])
	if rec.Header().Get("Content-Encoding") != "" || rec.Body.Len() != gzipThreshold {
		t.Errorf("small body: got %v, %d bytes, want it plain", rec.Header(), rec.Body.Len())
	}
}

// A watch stream's ERROR frame is framed as the stream is.
func TestResponderErrorFrame(t *testing.T) {
	js := NewResponder(Negotiated{}).ErrorFrame(ListExpired())
	if !bytes.HasPrefix(js, []byte(`{"type":"ERROR","object":{"kind":"Status"`)) || !bytes.HasSuffix(js, []byte("}\n")) {
		t.Errorf("JSON frame: got %s", js)
	}
	pb := NewResponder(Negotiated{MediaType: MediaTypeProtobuf}).ErrorFrame(ListExpired())
	if len(pb) < 4 || int(pb[0])<<24|int(pb[1])<<16|int(pb[2])<<8|int(pb[3]) != len(pb)-4 {
		t.Errorf("protobuf frame: got %x, want a 4-byte length prefix", pb)
	}
	if err := NewResponder(Negotiated{MediaType: MediaTypeYAML}).StreamError(); ToStatus(err).Code != http.StatusNotAcceptable {
		t.Errorf("YAML stream: got %v, want 406", err)
	}
}
