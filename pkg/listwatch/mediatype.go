package listwatch

import (
	"net/http"
	"strings"

	"github.com/munnerz/goautoneg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
)

// conversion is what the negotiated Accept clause asks an answer to be
// converted to, as kube-apiserver's as=, g= and v= media type parameters do.
type conversion int

const (
	// convertNone answers with the object or list itself.
	convertNone conversion = iota
	// convertTable answers with a meta.k8s.io Table (kubectl get).
	convertTable
	// convertAggregated answers with an apidiscovery.k8s.io/v2
	// APIGroupDiscoveryList (aggregated discovery).
	convertAggregated
)

// Media type parameters that ask for a conversion.
const (
	paramAs      = "as"
	paramGroup   = "g"
	paramVersion = "v"
	// aggregatedGroup, aggregatedVersion and aggregatedKind name the
	// aggregated discovery document. kube-apiserver 1.36 locks
	// AggregatedDiscoveryRemoveBetaType on, so v2beta1 is not served.
	aggregatedGroup   = "apidiscovery.k8s.io"
	aggregatedVersion = "v2"
	aggregatedKind    = "APIGroupDiscoveryList"
	tableKind         = "Table"
)

// mediaChoice is the outcome of Accept negotiation for the endpoints that
// convert.
type mediaChoice struct {
	convert conversion
	// version is the meta.k8s.io version of a Table: v1 or v1beta1.
	version string
}

// endpointKind says which conversions an endpoint offers.
type endpointKind int

const (
	resourceEndpoint  endpointKind = iota // get, list, watch: Table
	discoveryEndpoint                     // /api and /apis: aggregated discovery
)

// chooseMedia picks the first JSON Accept clause, in kube's preference
// order (quality, then specificity), that the endpoint can serve: a plain
// one means no conversion, and clauses asking for a conversion the endpoint
// does not offer are skipped, as kube-apiserver's negotiation does. Other
// media types are left to negotiate.
func chooseMedia(r *http.Request, kind endpointKind) mediaChoice {
	header := strings.Join(r.Header.Values("Accept"), ",")
	if header == "" {
		return mediaChoice{}
	}
	for _, c := range goautoneg.ParseAccept(header) {
		if !jsonClause(c) {
			continue
		}
		as, g, v := c.Params[paramAs], c.Params[paramGroup], c.Params[paramVersion]
		if as == "" && g == "" && v == "" {
			return mediaChoice{}
		}
		if ch, ok := conversionFor(kind, as, g, v); ok {
			return ch
		}
	}
	return mediaChoice{}
}

// jsonClause reports whether an Accept clause admits JSON.
func jsonClause(c goautoneg.Accept) bool {
	switch {
	case c.Type == "application" && c.SubType == "json",
		c.Type == "application" && c.SubType == "*",
		c.Type == "*" && c.SubType == "*":
		return true
	}
	return false
}

// conversionFor maps as/g/v parameters to a conversion the endpoint offers.
func conversionFor(kind endpointKind, as, g, v string) (mediaChoice, bool) {
	switch kind {
	case resourceEndpoint:
		if as == tableKind && g == metav1.GroupName &&
			(v == metav1.SchemeGroupVersion.Version || v == metav1beta1.SchemeGroupVersion.Version) {
			return mediaChoice{convert: convertTable, version: v}, true
		}
	case discoveryEndpoint:
		if as == aggregatedKind && g == aggregatedGroup && v == aggregatedVersion {
			return mediaChoice{convert: convertAggregated}, true
		}
	}
	return mediaChoice{}, false
}
