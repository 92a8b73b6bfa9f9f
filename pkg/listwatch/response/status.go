package response

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// ToStatus converts err the way kube-apiserver's ErrorToAPIStatus does:
// API status errors keep their status, anything else becomes 500.
func ToStatus(err error) metav1.Status {
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

// MarshalStatus encodes st as JSON.
func MarshalStatus(st metav1.Status) []byte {
	b, err := json.Marshal(st)
	if err != nil {
		// A Status holds only strings and numbers; this cannot happen.
		b = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":500}`)
	}
	return b
}

// RouteNotAcceptable is kube-apiserver's 406 from its route layer
// (go-restful) for an Accept header none of whose media types a route
// produces: go-restful's message, wrapped by the apiserver's service error
// handler in a generic Status.
func RouteNotAcceptable(available []string) error {
	msg := "406: Not Acceptable\n\nAvailable representations: " + strings.Join(available, ", ")
	return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "", msg, 0, false)
}

// NotAcceptable is kube-apiserver's 406 listing the media types it serves.
func NotAcceptable(supported []string) error {
	return NotAcceptableMessage("only the following media types are accepted: " + strings.Join(supported, ", "))
}

// NotAcceptableMessage is a 406 with msg, as kube-apiserver answers a
// conversion it cannot make.
func NotAcceptableMessage(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: msg,
	}}
}

// StorageInitializing is kube-apiserver's answer while a resource's
// watch cache is not ready.
func StorageInitializing() error {
	return apierrors.NewTooManyRequests("storage is (re)initializing", initializingRetryAfterSeconds)
}

// TooLargeRV mirrors kube-apiserver's NewTooLargeResourceVersionError;
// client-go relists when it sees the ResourceVersionTooLarge cause.
func TooLargeRV(requested, current uint64) error {
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

// ListExpired is the 410 for an exact list older than the event ring.
func ListExpired() error {
	return apierrors.NewResourceExpired(listExpiredMessage)
}

// ContinueExpired is the 410 for a continue token older than the event
// ring. Like kube's it carries, in metadata.continue, next: a token for the
// rest of the list at the latest state.
func ContinueExpired(next string) error {
	err := apierrors.NewResourceExpired(inconsistentContinueMessage)
	err.ErrStatus.ListMeta.Continue = next
	return err
}

// CloudUnavailable answers requests the cloud must serve while it cannot
// be reached.
func CloudUnavailable() error {
	err := apierrors.NewServiceUnavailable("the cloud API server is unreachable")
	err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: cloudRetryAfterSeconds}
	return err
}

// PathNotFound is the 404 for a path no handler serves.
func PathNotFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
	}}
}

// CacheError maps a versioncache error to the API error kube-apiserver
// gives for the same state of its own watch cache.
func CacheError(err error) error {
	var tooOld *versioncache.TooOldError
	switch {
	case errors.As(err, &tooOld):
		return apierrors.NewResourceExpired(tooOld.Error())
	case errors.Is(err, versioncache.ErrNotReady):
		return StorageInitializing()
	case errors.Is(err, versioncache.ErrClosed):
		return apierrors.NewServiceUnavailable("the local cache is shutting down")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError(err.Error(), 0)
	default:
		return apierrors.NewInternalError(err)
	}
}
