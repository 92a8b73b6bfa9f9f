package metrics

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
)

// requestBuckets (seconds) are kube-apiserver's for
// apiserver_request_duration_seconds.
var requestBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// verbOther labels requests whose method is none of knownVerbs' (a
// resource request's unknown method has no verb), so a client cannot grow
// the label set with made-up methods.
const verbOther = "other"

// knownVerbs are the verbs of kube resource requests and the lowercase
// methods of the others.
var knownVerbs = sets.New("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
	"post", "put", "head", "options")

// resourceOther labels requests for resources outside the known set, so a
// client cannot grow the label set with made-up paths.
const resourceOther = "other"

func (m *Metrics) newRequestMetrics() {
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Local API requests, by verb, resource, HTTP code and door.",
	}, []string{"verb", "resource", "code", "door"})
	m.requestSecs = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Local API request latency, by verb, resource and door (a watch lasts its whole stream).",
		Buckets: requestBuckets,
	}, []string{"verb", "resource", "door"})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_lite_authentication_failures_total",
		Help: "Requests answered 401 because their caller could not be authenticated, by door.",
	}, []string{"door"})
}

// AuthFailed counts a request at door whose caller could not be
// authenticated.
func (m *Metrics) AuthFailed(door string) {
	m.authFailures.WithLabelValues(door).Inc()
}

// reqLabelsKey carries a request's labels from Instrument to promhttp.
type reqLabelsKey struct{}

type reqLabels struct{ verb, resource, door string }

// Instrument counts and times every request h serves at door. known says
// whether a group-resource ("pods", "leases.coordination.k8s.io") is one
// to label by name; nil means all.
func (m *Metrics) Instrument(h http.Handler, door string, known func(string) bool) http.Handler {
	label := func(name string, get func(reqLabels) string) promhttp.Option {
		return promhttp.WithLabelFromCtx(name, func(ctx context.Context) string {
			l, _ := ctx.Value(reqLabelsKey{}).(reqLabels)
			return get(l)
		})
	}
	opts := []promhttp.Option{
		label("verb", func(l reqLabels) string { return l.verb }),
		label("resource", func(l reqLabels) string { return l.resource }),
		label("door", func(l reqLabels) string { return l.door }),
	}
	inner := promhttp.InstrumentHandlerDuration(m.requestSecs, h, opts...)
	inner = promhttp.InstrumentHandlerCounter(m.requests, inner, opts...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, gr := RequestInfo(r)
		if gr != "" && known != nil && !known(gr) {
			gr = resourceOther
		}
		ctx := context.WithValue(r.Context(), reqLabelsKey{}, reqLabels{verb: v, resource: gr, door: door})
		inner.ServeHTTP(w, r.WithContext(ctx))
	})
}

// RequestInfo returns the kube verb (get, list, watch, create, update,
// patch, delete, deletecollection) and the group-resource of a resource
// request, as the TLS door authorizes it; for other paths, the lowercase
// method and "".
func RequestInfo(r *http.Request) (verb, groupResource string) {
	a := requestinfo.Resolve(r)
	verb = a.Verb
	if !knownVerbs.Has(verb) {
		verb = verbOther
	}
	if !a.ResourceRequest {
		return verb, ""
	}
	gr := a.Resource
	if a.Group != "" {
		gr += "." + a.Group
	}
	return verb, gr
}
