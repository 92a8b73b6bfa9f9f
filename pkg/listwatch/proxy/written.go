package proxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// maxWriteResponseScan is the largest write response body (after
// decompression) read to find its resourceVersion: etcd's default request
// limit (1.5 MiB) plus room for the JSON envelope. Larger bodies are
// passed through unread.
const maxWriteResponseScan = 2 << 20

// statusKind is the kind of a metav1.Status body, which carries no object.
const statusKind = "Status"

// WrittenRV returns metadata.resourceVersion of the object a successful
// write returned, reading at most maxWriteResponseScan bytes of resp's
// body; the bytes read are put back, so the client receives the body
// unchanged. A body it cannot read, and a Status, give false.
func WrittenRV(resp *http.Response) (uint64, bool) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, false
	}
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || (mediaType != response.MediaTypeJSON && mediaType != response.MediaTypeProtobuf) {
		return 0, false
	}
	if resp.ContentLength > maxWriteResponseScan {
		return 0, false
	}
	body, complete, err := readBounded(resp.Body, maxWriteResponseScan)
	resp.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(body), resp.Body), Closer: resp.Body}
	if err != nil || !complete {
		return 0, false
	}
	return objectRV(body, mediaType, resp.Header.Get("Content-Encoding"))
}

// readBounded reads r up to limit bytes. complete reports that r ended
// within them; otherwise the bytes read so far are returned for replay.
func readBounded(r io.Reader, limit int64) (b []byte, complete bool, err error) {
	b, err = io.ReadAll(io.LimitReader(r, limit+1))
	return b, err == nil && int64(len(b)) <= limit, err
}

// objectRV returns metadata.resourceVersion of a JSON or protobuf write
// response, identity or gzip encoded. A Status (what some deletes return)
// carries none.
func objectRV(body []byte, mediaType, encoding string) (uint64, bool) {
	switch encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return 0, false
		}
		var complete bool
		if body, complete, err = readBounded(zr, maxWriteResponseScan); err != nil || !complete {
			return 0, false
		}
	default:
		return 0, false
	}
	var rv string
	if mediaType == response.MediaTypeProtobuf {
		rv = protobufRV(body)
	} else {
		rv = jsonRV(body)
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil && n > 0
}

// jsonRV returns metadata.resourceVersion of a JSON object, "" for a Status.
func jsonRV(body []byte) string {
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil || obj.Kind == statusKind {
		return ""
	}
	return obj.Metadata.ResourceVersion
}

// protobufRV returns metadata.resourceVersion of a protobuf object, "" for
// a Status. Every built-in kind has its ObjectMeta as field 1, as
// PartialObjectMetadata does, whose decoder skips the other fields.
func protobufRV(body []byte) string {
	var u runtime.Unknown
	if !bytes.HasPrefix(body, response.ProtobufMagic) || u.Unmarshal(body[len(response.ProtobufMagic):]) != nil || u.Kind == statusKind {
		return ""
	}
	var m metav1.PartialObjectMetadata
	if err := m.Unmarshal(u.Raw); err != nil {
		return ""
	}
	return m.ResourceVersion
}

// replayBody is a response body whose first bytes were already read: it
// reads them again, then the rest, and closes the original body.
type replayBody struct {
	io.Reader
	io.Closer
}
