package auth

import (
	"errors"
	"net/http"
)

// errNeverForwarded is returned for the daemon's own endpoints, which the
// cloud never answers for it.
var errNeverForwarded = errors.New("the daemon's own endpoints are never forwarded to the cloud")

// CallerTransport wraps the daemon's own cloud transport for a proxy: each
// request goes with the round tripper ForwardTransport picks from its
// context (the caller's token), else with daemon. The daemon's own
// endpoints (/metrics, /debug/pprof/, health) are never sent. A request that cannot be
// forwarded fails with ErrNotForwardable; check it first with
// CheckForwardable to answer 403 instead.
func CallerTransport(daemon http.RoundTripper) http.RoundTripper {
	return callerTransport{daemon: daemon}
}

type callerTransport struct{ daemon http.RoundTripper }

func (t callerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if operationsPath(r.URL.Path) || healthPath(r.URL.Path) {
		return nil, errNeverForwarded
	}
	rt, err := ForwardTransport(r.Context())
	switch {
	case err != nil:
		return nil, err
	case rt != nil:
		return rt.RoundTrip(r)
	default:
		return t.daemon.RoundTrip(r)
	}
}

// NeverForwarded reports whether path is one of the daemon's own endpoints
// (/metrics, /debug/pprof/, health), which the cloud is never asked for.
func NeverForwarded(path string) bool {
	return operationsPath(path) || healthPath(path)
}

// CheckForwardable answers 403 for a request whose caller cannot be
// forwarded to the cloud and reports whether it may be.
func CheckForwardable(w http.ResponseWriter, r *http.Request) bool {
	if _, err := ForwardTransport(r.Context()); err != nil {
		forbidden(w, err.Error())
		return false
	}
	return true
}
