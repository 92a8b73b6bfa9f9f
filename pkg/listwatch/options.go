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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// watchListEnabled is true: the WatchList protocol (sendInitialEvents) is
// served, and validated as kube-apiserver does with its WatchList feature
// gate on (the default since v1.34).
const watchListEnabled = true

// listOptionsKind names ListOptions in validation errors.
var listOptionsKind = schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}

// errContinueUnsupported answers a continue token: every list is served
// whole, so no token this server handed out can exist.
const errContinueUnsupported = "continue tokens are not supported: lists are served whole, retry without continue"

// listRequest is a decoded and validated list or watch request.
type listRequest struct {
	opts  metainternalversion.ListOptions
	rv    uint64 // resourceVersion; 0 when unset or "0"
	exact bool   // the list must be served at exactly rv
	pred  versioncache.Predicate
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
	if req.opts.Continue != "" {
		return nil, apierrors.NewBadRequest(errContinueUnsupported)
	}
	field, err := convertFieldSelector(req.opts.FieldSelector, t.groupKind())
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if req.rv, err = parseRV(req.opts.ResourceVersion); err != nil {
		return nil, err
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

// Selectable fields beyond the metadata ones every kind has, as
// kube-apiserver's field label conversion functions name them.
var (
	metadataFields = sets.New("metadata.name", "metadata.namespace")
	kindFields     = map[schema.GroupKind]sets.Set[string]{
		{Kind: "Pod"}: sets.New("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
			"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
			"status.nominatedNodeName"),
		{Kind: "Node"}:      sets.New("spec.unschedulable"),
		{Kind: "Service"}:   sets.New("spec.clusterIP", "spec.type"),
		{Kind: "Secret"}:    sets.New("type"),
		{Kind: "Namespace"}: sets.New("status.phase", "name"),
	}
	// fieldAliases maps deprecated field labels to the ones objects carry.
	fieldAliases = map[schema.GroupKind]map[string]string{
		{Kind: "Pod"}: {"spec.host": "spec.nodeName"},
	}
)

// convertFieldSelector checks that every field in sel is selectable for
// kind and rewrites aliases, as kube-apiserver's ConvertFieldLabel does.
func convertFieldSelector(sel fields.Selector, kind schema.GroupKind) (fields.Selector, error) {
	if sel == nil {
		return nil, nil
	}
	return sel.Transform(func(label, value string) (string, string, error) {
		if alias, ok := fieldAliases[kind][label]; ok {
			return alias, value, nil
		}
		if metadataFields.Has(label) || kindFields[kind].Has(label) {
			return label, value, nil
		}
		return "", "", fmt.Errorf("field label not supported: %s", label)
	})
}
