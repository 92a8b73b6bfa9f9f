package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
)

// ErrNotForwardable is returned by ForwardTransport for a caller that
// authenticated with a client certificate other than this node's: the
// cloud cannot be asked on its behalf, as its key never leaves the caller.
var ErrNotForwardable = errors.New("a caller authenticated by a client certificate other than this node's " +
	"cannot be forwarded to the cloud; use a service account token")

// Forwarder builds round trippers that act as a caller in the cloud.
type Forwarder struct {
	// base reaches the cloud with its CA but no credentials: no client
	// certificate, since kube-apiserver lets a client certificate win
	// over a bearer token.
	base http.RoundTripper
}

// NewForwarder returns a Forwarder for the cloud of cloud, without any of
// cloud's credentials.
func NewForwarder(cloud *rest.Config) (*Forwarder, error) {
	anon := rest.AnonymousClientConfig(cloud)
	rt, err := rest.TransportFor(anon)
	if err != nil {
		return nil, fmt.Errorf("caller transport: %w", err)
	}
	return &Forwarder{base: rt}, nil
}

// For returns a round tripper that sends token as the bearer token.
func (f *Forwarder) For(token string) http.RoundTripper {
	return &bearerRoundTripper{token: token, base: f.base}
}

// bearerRoundTripper sets the caller's token on every request, replacing
// any Authorization header copied from the local request.
type bearerRoundTripper struct {
	token string
	base  http.RoundTripper
}

func (b *bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

type forwardKey struct{}

// forwarding is how the proxy reaches the cloud for one request.
type forwarding struct {
	rt  http.RoundTripper
	err error
	// daemon forwards with the daemon's own credentials.
	daemon bool
}

// withForward records how the proxy must reach the cloud for this request.
func withForward(ctx context.Context, rt http.RoundTripper, err error) context.Context {
	return context.WithValue(ctx, forwardKey{}, forwarding{rt: rt, err: err})
}

// AsNode marks a request as sent by this node itself (its own identity on
// an authenticated door, or any caller of the insecure door): the proxy
// forwards it with the daemon's credentials.
func AsNode(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardKey{}, forwarding{daemon: true})
}

// errNoCaller is returned for a request that no door authenticated: with
// no caller to act as, it is never sent with the daemon's credentials.
var errNoCaller = errors.New("the request has no authenticated caller to forward as")

// ForwardTransport tells the proxy how to forward the request of ctx:
// (nil, nil) means with the daemon's own credentials (AsNode); a non-nil
// round tripper acts as the caller; ErrNotForwardable means answer 403
// with the error's text. A request no door marked fails closed.
func ForwardTransport(ctx context.Context) (http.RoundTripper, error) {
	f, ok := ctx.Value(forwardKey{}).(forwarding)
	switch {
	case !ok:
		return nil, errNoCaller
	case f.daemon:
		return nil, nil
	case f.rt == nil && f.err == nil:
		return nil, errNoCaller
	}
	return f.rt, f.err
}

type userKey struct{}

// UserFrom is the caller authenticated by the TLS door, if any.
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}
