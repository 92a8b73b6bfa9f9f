package response

import (
	"bytes"
	"encoding/json"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"
)

// Table asks for an answer converted to a meta.k8s.io Table
// (Accept: application/json;as=Table;g=meta.k8s.io;v=v1).
type Table struct {
	APIVersion string              // meta.k8s.io/v1 or meta.k8s.io/v1beta1
	Options    metav1.TableOptions // includeObject and noHeaders
	// Err is kube's 400 for invalid Table options. kube-apiserver reports
	// it only once the read itself succeeded, so handlers check it there.
	Err error
}

// Partial asks for an answer converted to PartialObjectMetadata
// (as=PartialObjectMetadata[List];g=meta.k8s.io), as metadata clients do.
type Partial struct {
	Version string // v1 or v1beta1
	List    bool   // PartialObjectMetadataList: only a list can be converted
}

// Negotiated is what content negotiation decided for one request.
type Negotiated struct {
	// MediaType is MediaTypeJSON, MediaTypeYAML or MediaTypeProtobuf.
	MediaType string
	// Table is non-nil when the answer is converted to a Table.
	Table *Table
	// Partial is non-nil when the answer is converted to
	// PartialObjectMetadata; never set together with Table.
	Partial *Partial
	// Gzip: the client accepts gzip, so large bodies are compressed.
	Gzip bool
}

// Responder writes one request's answer, errors and watch frames in its
// negotiated encoding. It is built once per request by NewResponder and
// never changed, so it is passed by value.
type Responder struct {
	mediaType string
	table     *Table   // read only
	partial   *Partial // read only
	gzip      bool
}

// NewResponder returns the responder of a negotiated request.
func NewResponder(n Negotiated) Responder {
	if n.MediaType == "" {
		n.MediaType = MediaTypeJSON
	}
	return Responder{mediaType: n.MediaType, table: n.Table, partial: n.Partial, gzip: n.Gzip}
}

// MediaType is the negotiated media type, without parameters.
func (r Responder) MediaType() string { return r.mediaType }

// Protobuf reports whether the answer is protobuf.
func (r Responder) Protobuf() bool { return r.mediaType == MediaTypeProtobuf }

// Table returns the Table conversion, nil when none was asked for. The
// caller must not change it.
func (r Responder) Table() *Table { return r.table }

// Partial returns the metadata conversion, nil when none was asked for.
// The caller must not change it.
func (r Responder) Partial() *Partial { return r.partial }

// StreamError is kube's 406 for a watch in this media type, nil when the
// media type has a stream framing (YAML has none).
func (r Responder) StreamError() error {
	if r.mediaType == MediaTypeYAML {
		return NotAcceptable(SupportedStreamMediaTypes)
	}
	return nil
}

// Error writes err as a metav1.Status in the negotiated media type, as
// kube-apiserver's ErrorNegotiated does, with its code and retry hint.
func (r Responder) Error(w http.ResponseWriter, err error) {
	st := ToStatus(err)
	switch r.mediaType {
	case MediaTypeProtobuf:
		if b, perr := protobufStatus(&st); perr == nil {
			writeStatus(w, MediaTypeProtobuf, st, b)
			return
		}
	case MediaTypeYAML:
		if b, yerr := yaml.JSONToYAML(MarshalStatus(st)); yerr == nil {
			writeStatus(w, MediaTypeYAML, st, b)
			return
		}
	}
	writeStatus(w, MediaTypeJSON, st, append(MarshalStatus(st), '\n'))
}

// Body writes a 200 answer made of parts: protobuf bytes for a protobuf
// responder, else JSON, which a YAML responder converts.
func (r Responder) Body(w http.ResponseWriter, parts ...[]byte) {
	if r.mediaType == MediaTypeYAML {
		b, err := yaml.JSONToYAML(bytes.Join(parts, nil))
		if err != nil {
			r.Error(w, err)
			return
		}
		parts = [][]byte{b}
	}
	WriteBody(w, r.mediaType, r.gzip, parts...)
}

// Object writes obj, encoded as JSON (or YAML), as a 200 answer.
func (r Responder) Object(w http.ResponseWriter, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		r.Error(w, err)
		return
	}
	r.Body(w, b, []byte{'\n'})
}

// StartStream writes the headers of a watch answer.
func (r Responder) StartStream(w http.ResponseWriter) {
	h := w.Header()
	if r.Protobuf() {
		h.Set("Content-Type", MediaTypeProtobufWatch)
	} else {
		h.Set("Content-Type", MediaTypeJSON)
	}
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
}

// ErrorFrame is an ERROR watch event carrying err's Status, in the
// stream's framing.
func (r Responder) ErrorFrame(err error) []byte {
	st := ToStatus(err)
	if r.Protobuf() {
		b, perr := protobufStatus(&st)
		if perr == nil {
			b, perr = ProtobufWatchFrame(watch.Error, b)
		}
		if perr == nil {
			return b
		}
	}
	b := []byte(`{"type":"ERROR","object":`)
	b = append(b, MarshalStatus(st)...)
	return append(b, "}\n"...)
}

// ErrorStream answers a watch with 200 and one ERROR event carrying err,
// as kube-apiserver's errWatcher does for errors found after the request
// was validated.
func (r Responder) ErrorStream(w http.ResponseWriter, err error) {
	r.StartStream(w)
	_, _ = w.Write(r.ErrorFrame(err))
	_ = http.NewResponseController(w).Flush()
}
