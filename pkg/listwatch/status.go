package listwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Retry hints, in seconds, sent as details.retryAfterSeconds and Retry-After.
const (
	// initializingRetryAfterSeconds is kube-apiserver's hint while its watch
	// cache (re)initializes: the shortest wait it ever asks for.
	initializingRetryAfterSeconds = 1
	// tooLargeRVRetryAfterSeconds is kube-apiserver's hint after a too large
	// resourceVersion did not arrive in time.
	tooLargeRVRetryAfterSeconds = 1
	// cloudRetryAfterSeconds is the hint while the cloud is unreachable:
	// client-go retries such answers itself, so keep each wait short.
	cloudRetryAfterSeconds = 1
)

// Content types of the answers.
const (
	contentTypeJSON = "application/json"
	contentTypeText = "text/plain; charset=utf-8"
)

// writeError writes err as a metav1.Status JSON body whose HTTP status is its
// code, with Retry-After when the status carries a retry hint.
func writeError(w http.ResponseWriter, err error) {
	st := toStatus(err)
	if negotiatesProtobuf(w) && writeProtoError(w, st) {
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentTypeJSON)
	h.Set("X-Content-Type-Options", "nosniff")
	if d := st.Details; d != nil && d.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(append(marshalStatus(st), '\n'))
}

// toStatus converts err the way kube-apiserver's ErrorToAPIStatus does:
// API status errors keep their status, anything else becomes 500.
func toStatus(err error) metav1.Status {
	var st metav1.Status
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		st = apiStatus.Status()
	} else {
		st = apierrors.NewInternalError(err).ErrStatus
	}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	st.Kind, st.APIVersion = "Status", "v1"
	return st
}

// marshalStatus encodes st as JSON.
func marshalStatus(st metav1.Status) []byte {
	b, err := json.Marshal(st)
	if err != nil {
		// A Status holds only strings and numbers; this cannot happen.
		b = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":500}`)
	}
	return b
}

// errStorageInitializing is kube-apiserver's answer while a resource's
// watch cache is not ready.
func errStorageInitializing() error {
	return apierrors.NewTooManyRequests("storage is (re)initializing", initializingRetryAfterSeconds)
}

// errTooLargeRV mirrors kube-apiserver's NewTooLargeResourceVersionError;
// client-go relists when it sees the ResourceVersionTooLarge cause.
func errTooLargeRV(requested, current uint64) error {
	msg := fmt.Sprintf("Too large resource version: %d, current: %d", requested, current)
	err := apierrors.NewTimeoutError(msg, tooLargeRVRetryAfterSeconds)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// Messages of kube-apiserver's 410s for lists its storage can no longer
// serve (etcd3's errors.go).
const (
	listExpiredMessage = "The resourceVersion for the provided list is too old."
	// inconsistentContinueMessage comes with a token continuing at the
	// latest state.
	inconsistentContinueMessage = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// errListExpired is the 410 for an exact list older than the event ring.
func errListExpired() error {
	return apierrors.NewResourceExpired(listExpiredMessage)
}

// errContinueExpired is the 410 for a continue token older than the event
// ring. Like kube it carries, in metadata.continue, a token for the rest of
// the list from start at the latest state.
func errContinueExpired(start string) error {
	err := apierrors.NewResourceExpired(inconsistentContinueMessage)
	err.ErrStatus.ListMeta.Continue = encodeContinue(start, continueLatestRV)
	return err
}

// errCloudUnavailable answers requests the cloud must serve while it cannot
// be reached.
func errCloudUnavailable() error {
	err := apierrors.NewServiceUnavailable("the cloud API server is unreachable")
	err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: cloudRetryAfterSeconds}
	return err
}

// errPathNotFound is the 404 for a path no handler serves.
func errPathNotFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
	}}
}

// cacheError maps a versioncache error to the API error kube-apiserver
// gives for the same state of its own watch cache.
func cacheError(err error) error {
	var tooOld *versioncache.TooOldError
	switch {
	case errors.As(err, &tooOld):
		return apierrors.NewResourceExpired(tooOld.Error())
	case errors.Is(err, versioncache.ErrNotReady):
		return errStorageInitializing()
	case errors.Is(err, versioncache.ErrClosed):
		return apierrors.NewServiceUnavailable("the local cache is shutting down")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError(err.Error(), 0)
	default:
		return apierrors.NewInternalError(err)
	}
}
