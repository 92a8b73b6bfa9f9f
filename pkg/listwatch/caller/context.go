package caller

import (
	"context"
	"errors"
	"net/http"
)

// ErrNotForwardable is returned by ForwardTransport for a caller that
// authenticated with a client certificate other than this node's: the
// cloud cannot be asked on its behalf, as its key never leaves the caller.
var ErrNotForwardable = errors.New("a caller authenticated by a client certificate other than this node's " +
	"cannot be forwarded to the cloud; use a service account token")

// errNoCaller is returned for a request that no door authenticated: with
// no caller to act as, it is never sent with the daemon's credentials.
var errNoCaller = errors.New("the request has no authenticated caller to forward as")

// User is an authenticated caller.
type User struct {
	Name   string              `json:"name"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

type forwardKey struct{}

// forwarding is how the proxy reaches the cloud for one request.
type forwarding struct {
	rt  http.RoundTripper
	err error
	// daemon forwards with the daemon's own credentials.
	daemon bool
	// as, with daemon, asks the cloud to act as this user
	// (impersonation), so its own authorization and admission apply.
	as *User
}

// WithForward records how the proxy must reach the cloud for this
// request: through rt as the caller, or not at all with err.
func WithForward(ctx context.Context, rt http.RoundTripper, err error) context.Context {
	return context.WithValue(ctx, forwardKey{}, forwarding{rt: rt, err: err})
}

// AsNode marks a request as sent by this node itself (its own identity on
// an authenticated door, or any caller of the insecure door): the proxy
// forwards it with the daemon's credentials.
func AsNode(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardKey{}, forwarding{daemon: true})
}

// AsNodeImpersonating marks a request as this node's own, forwarded with
// the daemon's credentials impersonating node (Impersonate-User and
// Impersonate-Group): the cloud then authorizes and admits it as the node
// (Node authorizer, NodeRestriction), not as the daemon.
func AsNodeImpersonating(ctx context.Context, node User) context.Context {
	return context.WithValue(ctx, forwardKey{}, forwarding{daemon: true, as: &node})
}

// impersonated is the user a request of ctx is forwarded as with the
// daemon's credentials, if any.
func impersonated(ctx context.Context) (User, bool) {
	f, ok := ctx.Value(forwardKey{}).(forwarding)
	if !ok || !f.daemon || f.as == nil {
		return User{}, false
	}
	return *f.as, true
}

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

// WithUser records the caller a door authenticated.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom is the caller authenticated by a door, if any.
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}
