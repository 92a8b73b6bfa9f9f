package door

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeStatus answers with err's Status as JSON, through the local API's
// one Status writer.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	response.WriteError(w, err)
}

func forbidden(w http.ResponseWriter, msg string) {
	writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden,
		Reason: metav1.StatusReasonForbidden, Message: msg,
	}})
}

func unauthorized(w http.ResponseWriter) {
	writeStatus(w, apierrors.NewUnauthorized("Unauthorized"))
}

// tooMany answers 429 asking the client to retry after retryAfter seconds.
func tooMany(w http.ResponseWriter, msg string, retryAfter int) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeStatus(w, apierrors.NewTooManyRequests(msg, retryAfter))
}

func notFound(w http.ResponseWriter) {
	writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource",
	}})
}

// unavailable answers 503 asking the client to retry after retryAfter
// seconds.
func unavailable(w http.ResponseWriter, msg string, retryAfter int) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	st := apierrors.NewServiceUnavailable(msg)
	st.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(retryAfter)}
	writeStatus(w, st)
}

// retryAfterOf is the delay the cloud suggested in err, at least
// retryAfterSeconds.
func retryAfterOf(err error) int {
	if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
		return s
	}
	return retryAfterSeconds
}

// unsupportedMediaType answers 415 as kube-apiserver does for a body it
// cannot decode.
func unsupportedMediaType(w http.ResponseWriter, contentType string) {
	writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: "+
			"application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", contentType),
	}})
}
