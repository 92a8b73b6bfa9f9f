package negotiate

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/munnerz/goautoneg"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// AggregatedDiscovery reports whether r asks for aggregated discovery
// before any plain JSON. Clauses asking for other conversions are skipped,
// as kube-apiserver's negotiation skips what an endpoint cannot serve.
func AggregatedDiscovery(r *http.Request) bool {
	header := strings.Join(r.Header.Values("Accept"), ",")
	if header == "" {
		return false
	}
	for _, c := range goautoneg.ParseAccept(header) {
		if !jsonClause(c) {
			continue
		}
		as, g, v := c.Params[paramAs], c.Params[paramGroup], c.Params[paramVersion]
		if as == "" && g == "" && v == "" {
			return false
		}
		if as == response.AggregatedKind && g == response.AggregatedGroup && v == response.AggregatedVersion {
			return true
		}
	}
	return false
}

// jsonClause reports whether an Accept clause admits JSON.
func jsonClause(c goautoneg.Accept) bool {
	return (c.Type == "application" && (c.SubType == "json" || c.SubType == "*")) ||
		(c.Type == "*" && c.SubType == "*")
}

// JSONOnly checks that r's Accept header allows the JSON a discovery or
// version answer is encoded in. Media type parameters are ignored, so a
// Table request gets the plain document, which kubectl prints and
// client-go's discovery falls back on. It returns the 406 when only other
// types are acceptable.
func JSONOnly(r *http.Request) error {
	if acceptsJSON(r.Header.Values("Accept")) {
		return nil
	}
	return response.NotAcceptable([]string{response.MediaTypeJSON})
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
	case response.MediaTypeJSON, "application/*", "*/*":
		return true
	}
	return false
}
