package listwatch

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/encode"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// watchListEnabled is true: the WatchList protocol (sendInitialEvents) is
// served, and validated as kube-apiserver does with its WatchList feature
// gate on (the default since v1.34).
const watchListEnabled = true

// listOptionsKind names ListOptions in validation errors.
var listOptionsKind = schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}

// listRequest is a decoded and validated list or watch request.
type listRequest struct {
	opts  metainternalversion.ListOptions
	rv    uint64 // resourceVersion; 0 when unset or "0"
	exact bool   // the list must be served at exactly rv
	pred  versioncache.Predicate
	// limit is the page size; 0 (all) when none was asked for or when
	// resourceVersion is "0", which kube-apiserver's watch cache serves
	// whole.
	limit int64
	// start and contRV come from a continue token: the key the page starts
	// at and the RV it is listed at (negative: the latest). contRV is 0
	// without a token.
	start  string
	contRV int64
}

// parseList decodes and validates list and watch parameters the way
// kube-apiserver's ListResource handler does.
func parseList(q url.Values, t target) (*listRequest, error) {
	req := &listRequest{}
	codec := metainternalversionscheme.ParameterCodec
	if err := codec.DecodeParameters(q, metav1.SchemeGroupVersion, &req.opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := validation.ValidateListOptions(&req.opts, watchListEnabled); len(errs) > 0 {
		return nil, apierrors.NewInvalid(listOptionsKind, "", errs)
	}
	field, err := convertFieldSelector(req.opts.FieldSelector, t.groupKind())
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := req.parseContinue(); err != nil {
		return nil, err
	}
	if req.rv, err = parseRV(req.opts.ResourceVersion); err != nil {
		return nil, err
	}
	if req.opts.ResourceVersion != "0" {
		req.limit = req.opts.Limit
	}
	// Like kube-apiserver, a legacy list with a non-zero resourceVersion
	// and a limit means "exactly at rv".
	req.exact = req.opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
		(req.opts.ResourceVersionMatch == "" && req.opts.Limit > 0 && req.rv > 0)
	req.pred = versioncache.Predicate{
		Namespace: t.namespace,
		Label:     req.opts.LabelSelector,
		Field:     field,
	}
	return req, nil
}

// parseContinue decodes a continue token and checks it may be used, in
// kube-apiserver's storage ValidateListOptions order: a bad token first,
// then a resourceVersion other than "" or "0" next to it. Watches ignore
// continue, as kube does.
func (req *listRequest) parseContinue() error {
	if req.opts.Continue == "" || req.opts.Watch {
		return nil
	}
	start, rv, err := encode.DecodeContinue(req.opts.Continue)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
	}
	if v := req.opts.ResourceVersion; v != "" && v != "0" {
		return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	req.start, req.contRV = start, rv
	return nil
}

// parseGet decodes a get's parameters and returns its resourceVersion.
func parseGet(q url.Values) (uint64, error) {
	var opts metav1.GetOptions
	codec := metainternalversionscheme.ParameterCodec
	if err := codec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
		return 0, apierrors.NewBadRequest(err.Error())
	}
	return parseRV(opts.ResourceVersion)
}

// parseRV parses a resourceVersion parameter as kube-apiserver's storage
// versioner does: "" and "0" are 0, anything else must be a decimal uint64.
func parseRV(s string) (uint64, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		errs := utilvalidation.ErrorList{utilvalidation.Invalid(utilvalidation.NewPath("resourceVersion"), s, err.Error())}
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", errs.ToAggregate()))
	}
	return rv, nil
}

// watchTimeout is the stream duration a watch asks for with timeoutSeconds,
// or the jittered default when it asks for none. jitter is in [0, 1).
func watchTimeout(opts *metainternalversion.ListOptions, jitter float64) time.Duration {
	if s := opts.TimeoutSeconds; s != nil && *s > 0 {
		if *s >= int64(maxWatchTimeout/time.Second) {
			return maxWatchTimeout
		}
		return time.Duration(*s) * time.Second
	}
	return time.Duration(float64(defaultWatchTimeout) * (1 + jitter))
}
