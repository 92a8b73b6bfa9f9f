package caller

import (
	"errors"
	"net/http"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttransport "k8s.io/client-go/transport"
)

// errNeverForwarded is returned for the daemon's own endpoints, which the
// cloud never answers for it.
var errNeverForwarded = errors.New("the daemon's own endpoints are never forwarded to the cloud")

// The daemon's health endpoints, each with its per-check subpaths: the one
// list the doors, the proxy and the operational view share.
const (
	PathHealthz = "/healthz"
	PathLivez   = "/livez"
	PathReadyz  = "/readyz"
	// PathMetrics and PathPprof are the daemon's other own endpoints.
	PathMetrics = "/metrics"
	PathPprof   = "/debug/pprof"
)

// healthBases are the health endpoints.
var healthBases = []string{PathHealthz, PathLivez, PathReadyz}

// Transport wraps the daemon's own cloud transport for a proxy: each
// request goes with the round tripper ForwardTransport picks from its
// context (the caller's token), else with daemon. The daemon's own
// endpoints (/metrics, /debug/pprof/, health) are never sent. A request
// that cannot be forwarded fails with ErrNotForwardable; check it first
// with CheckForwardable to answer 403 instead.
func Transport(daemon http.RoundTripper) http.RoundTripper {
	return transport{daemon: daemon}
}

type transport struct{ daemon http.RoundTripper }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if NeverForwarded(r.URL.Path) {
		return nil, errNeverForwarded
	}
	rt, err := ForwardTransport(r.Context())
	switch {
	case err != nil:
		return nil, err
	case rt != nil:
		return rt.RoundTrip(r)
	}
	if u, ok := impersonated(r.Context()); ok {
		r = r.Clone(r.Context())
		r.Header.Set(clienttransport.ImpersonateUserHeader, u.Name)
		r.Header.Del(clienttransport.ImpersonateGroupHeader)
		for _, g := range u.Groups {
			r.Header.Add(clienttransport.ImpersonateGroupHeader, g)
		}
	}
	return t.daemon.RoundTrip(r)
}

// NeverForwarded reports whether path is one of the daemon's own endpoints
// (/metrics, /debug/pprof/, health), which the cloud is never asked for.
func NeverForwarded(path string) bool {
	return OperationsPath(path) || HealthPath(path)
}

// HealthPath is true for /healthz, /livez, /readyz and their per-check
// subpaths.
func HealthPath(p string) bool {
	for _, base := range healthBases {
		if p == base || strings.HasPrefix(p, base+"/") {
			return true
		}
	}
	return false
}

// OperationsPath is true for the daemon's own endpoints, /metrics and
// /debug/pprof/, which are never forwarded to the cloud.
func OperationsPath(p string) bool {
	return p == PathMetrics || strings.HasPrefix(p, PathMetrics+"/") || p == PathPprof || strings.HasPrefix(p, PathPprof+"/")
}

// CheckForwardable answers 403 for a request whose caller cannot be
// forwarded to the cloud and reports whether it may be.
func CheckForwardable(w http.ResponseWriter, r *http.Request) bool {
	if _, err := ForwardTransport(r.Context()); err != nil {
		response.WriteError(w, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusForbidden,
			Reason: metav1.StatusReasonForbidden, Message: err.Error(),
		}})
		return false
	}
	return true
}
