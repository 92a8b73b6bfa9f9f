package negotiate

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/munnerz/goautoneg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1beta1/validation"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// Media type parameters kube-apiserver reads (acceptMediaTypeOptions).
const (
	paramAs            = "as"
	paramGroup         = "g"
	paramVersion       = "v"
	paramStream        = "stream"
	paramServerVersion = "sv"
)

// Conversions served: kubectl get's Table, and metadata clients'
// PartialObjectMetadata and PartialObjectMetadataList.
const (
	tableKind       = "Table"
	partialKind     = "PartialObjectMetadata"
	partialListKind = "PartialObjectMetadataList"
)

// serializer is one media type a resource endpoint can answer in, in
// kube-apiserver's order of preference among equally acceptable clauses.
type serializer struct {
	typ, subType string
	mediaType    string
	stream       bool // has a watch stream framing
}

var serializers = []serializer{
	{"application", "json", response.MediaTypeJSON, true},
	{"application", "yaml", response.MediaTypeYAML, false},
	{"application", "vnd.kubernetes.protobuf", response.MediaTypeProtobuf, true},
}

// conversion is what a clause's as=, g= and v= parameters ask for.
type conversion struct {
	set               bool
	kind, group, vers string
}

// Resource negotiates the answer to a get (collection false) or a list or
// watch (collection true) of a resource as kube-apiserver does: for a
// built-in kind its route layer first requires one Accept media type it
// produces, then NegotiateOutputMediaType picks the serializer and
// conversion. protobuf says whether the kind is built in (and has a
// protobuf encoding); custom resources are served in JSON and YAML only.
func Resource(r *http.Request, protobuf, collection bool) (response.Responder, error) {
	n := response.Negotiated{MediaType: response.MediaTypeJSON, Gzip: acceptsGzip(r)}
	header := r.Header.Get("Accept")
	if protobuf && !routeAccepts(header) {
		available := response.SupportedMediaTypes
		if collection {
			available = append(append([]string(nil), available...), response.SupportedStreamMediaTypes...)
		}
		return response.Responder{}, response.RouteNotAcceptable(available)
	}
	if header == "" {
		return response.NewResponder(n), nil
	}
	for _, c := range goautoneg.ParseAccept(header) {
		for _, s := range serializers {
			if !matches(c, s) {
				continue
			}
			conv, ok := acceptParams(c.Params, s)
			if !ok || !allowsTransform(s, conv, protobuf) {
				continue
			}
			n.MediaType = s.mediaType
			switch {
			case conv.kind == tableKind:
				n.Table = tableFor(conv, r.URL.Query())
			case conv.set:
				n.Partial = &response.Partial{Version: conv.vers, List: conv.kind == partialListKind}
			}
			return response.NewResponder(n), nil
		}
	}
	return response.Responder{}, response.NotAcceptable(response.SupportedMediaTypes)
}

// matches reports whether clause c admits s: the same type, type/*, or */*.
func matches(c goautoneg.Accept, s serializer) bool {
	return (c.Type == s.typ && (c.SubType == s.subType || c.SubType == "*")) ||
		(c.Type == "*" && c.SubType == "*")
}

// acceptParams reads a clause's parameters as kube's
// acceptMediaTypeOptions does: a stream other than watch, or on a media
// type without stream framing, and a server version other than v1 make
// the clause unacceptable. Unknown parameters are ignored.
func acceptParams(params map[string]string, s serializer) (conversion, bool) {
	var conv conversion
	for k, v := range params {
		switch k {
		case paramAs:
			conv.set, conv.kind = true, v
		case paramGroup:
			conv.set, conv.group = true, v
		case paramVersion:
			conv.set, conv.vers = true, v
		case paramStream:
			if v != "" && (!s.stream || v != response.StreamWatch) {
				return conversion{}, false
			}
		case paramServerVersion:
			if v != "" && v != metav1.SchemeGroupVersion.Version {
				return conversion{}, false
			}
		}
	}
	return conv, true
}

// allowsTransform is kube's RequestScope.AllowsMediaTypeTransform: no
// conversion in the kind's own serializers, a meta.k8s.io v1 or v1beta1
// Table in JSON or YAML, and PartialObjectMetadata[List] in any.
func allowsTransform(s serializer, conv conversion, protobuf bool) bool {
	if !conv.set {
		return s.mediaType != response.MediaTypeProtobuf || protobuf
	}
	if conv.group != metav1.GroupName ||
		(conv.vers != metav1.SchemeGroupVersion.Version && conv.vers != metav1beta1.SchemeGroupVersion.Version) {
		return false
	}
	switch conv.kind {
	case tableKind:
		return s.mediaType != response.MediaTypeProtobuf
	case partialKind, partialListKind:
		return true
	}
	return false
}

// tableFor decodes and validates the Table options of q as kube's
// optionsForTransform does; an invalid one is kept as the Table's Err.
func tableFor(conv conversion, q url.Values) *response.Table {
	t := &response.Table{APIVersion: conv.group + "/" + conv.vers}
	codec := metainternalversionscheme.ParameterCodec
	if err := codec.DecodeParameters(q, metav1.SchemeGroupVersion, &t.Options); err != nil {
		t.Err = apierrors.NewBadRequest(err.Error())
		return t
	}
	switch errs := validation.ValidateTableOptions(&t.Options); len(errs) {
	case 0:
	case 1:
		t.Err = apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		t.Err = apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
	return t
}

// acceptsGzip reads Accept-Encoding as kube's negotiateContentEncoding
// does: any comma-separated token that is exactly gzip.
func acceptsGzip(r *http.Request) bool {
	for _, token := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(token) == "gzip" {
			return true
		}
	}
	return false
}

// routeAccepts is go-restful's Route.matchesAccept for a built-in
// resource's routes: some comma-separated entry, parameters and quality
// stripped, is */* or a media type the route produces. An empty header
// accepts anything.
func routeAccepts(header string) bool {
	if header == "" {
		return true
	}
	for _, entry := range strings.Split(header, ",") {
		mt, _, _ := strings.Cut(entry, ";")
		mt = strings.Trim(mt, " ")
		if mt == "*/*" {
			return true
		}
		for _, s := range serializers {
			if mt == s.mediaType {
				return true
			}
		}
	}
	return false
}
