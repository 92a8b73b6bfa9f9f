package listwatch

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// negotiate checks that the request's Accept header allows the JSON every
// local answer is encoded in. Media type parameters are ignored, so a Table
// (as=Table) or aggregated discovery request gets plain JSON, which kubectl
// prints and client-go's discovery falls back on. It returns kube-apiserver's
// 406 when only other types are acceptable.
func negotiate(r *http.Request) error {
	accept := r.Header.Values("Accept")
	if acceptsJSON(accept) {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: " + contentTypeJSON,
	}}
}

// acceptsJSON reports whether Accept header values allow application/json:
// no header, or any entry that is application/json, application/* or */*
// with a non-zero quality. Entries that do not parse are skipped.
func acceptsJSON(values []string) bool {
	empty := true
	for _, v := range values {
		for _, entry := range strings.Split(v, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			empty = false
			if jsonEntry(entry) {
				return true
			}
		}
	}
	return empty
}

// jsonEntry reports whether one Accept entry admits application/json.
func jsonEntry(entry string) bool {
	mediaType, params, err := mime.ParseMediaType(entry)
	if err != nil {
		return false
	}
	if q, ok := params["q"]; ok {
		if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
			return false
		}
	}
	switch mediaType {
	case contentTypeJSON, "application/*", "*/*":
		return true
	}
	return false
}
