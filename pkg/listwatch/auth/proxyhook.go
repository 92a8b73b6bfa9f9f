package auth

import (
	"net/http"
)

// CallerTransport wraps the daemon's own cloud transport for a proxy: each
// request goes with the round tripper ForwardTransport picks from its
// context (the caller's token), else with daemon. A request that cannot be
// forwarded fails with ErrNotForwardable; check it first with
// CheckForwardable to answer 403 instead.
func CallerTransport(daemon http.RoundTripper) http.RoundTripper {
	return callerTransport{daemon: daemon}
}

type callerTransport struct{ daemon http.RoundTripper }

func (t callerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
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

// CheckForwardable answers 403 for a request whose caller cannot be
// forwarded to the cloud and reports whether it may be.
func CheckForwardable(w http.ResponseWriter, r *http.Request) bool {
	if _, err := ForwardTransport(r.Context()); err != nil {
		forbidden(w, err.Error())
		return false
	}
	return true
}
