package door

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

// InsecureConfig wires the insecure (plain HTTP) door.
type InsecureConfig struct {
	// Operations serves /metrics and /debug/pprof/; nil answers 404.
	Operations http.Handler
	Limiter    *Limiter
}

// SecureConfig wires an authenticated door. The kubelet's door
// (listen-address) and the pods' door (secure-listen-address) share it,
// differing only in where they listen and in their limits.
type SecureConfig struct {
	Authenticator *Authenticator
	Authorizer    *Authorizer
	Forwarder     *Forwarder
	// Operations serves /metrics and /debug/pprof/ to authorized callers;
	// nil answers 404.
	Operations http.Handler
	Limiter    *Limiter
	// ClusterScope authorizes this node's own identity per request too:
	// in cluster scope the daemon holds and forwards with more than the
	// Node authorizer lets the node read.
	ClusterScope bool
	// Holdings, when set, hold resources for the node's pods' own
	// identities; nil holds none.
	Holdings Holdings
	// ImpersonateNode forwards this node's writes with the daemon's
	// credentials impersonating system:node:<name> in system:nodes, so the
	// cloud's Node authorizer and NodeRestriction judge them as the node's
	// (cluster scope, where the daemon's own identity may write more).
	ImpersonateNode bool
	// NeverForward makes every read a caller was authorized for local
	// only: what the handlers would forward to the cloud is refused as not
	// forwardable (the pool door, which never acts for a peer's caller).
	NeverForward bool
}

// Insecure wraps the local API h as the insecure door: every caller acts
// as this node. It answers loopback Host headers only and refuses what a
// browser can send (see browser.go); it exists for tests and debugging.
func Insecure(h http.Handler, cfg InsecureConfig) http.Handler {
	lim := cfg.Limiter
	if lim == nil {
		lim = NewLimiter(Limits{}, LimiterConfig{})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !checkHost(w, r) || !refuseBrowsers(w, r) {
			return
		}
		done, ok := lim.admitIdentity(w, requestAttributes(r), "", true)
		if !ok {
			return
		}
		defer done()
		serveLocal(w, r.WithContext(caller.AsNode(r.Context())), h, cfg.Operations)
	})
}

// Secure wraps the local API h as an authenticated door: the terse health
// paths are anonymous; everything else is authenticated first, then
// limited by identity (this node's own lane, a fair share for any other),
// then authorized. Nothing shared is spent on a caller before it is known
// but the token review its source's budget allows.
func Secure(h http.Handler, cfg SecureConfig) http.Handler {
	if cfg.Limiter == nil {
		cfg.Limiter = NewLimiter(Limits{}, LimiterConfig{})
	}
	lim := cfg.Limiter
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if anonymousHealth(r) {
			serveTerse(w, r, h)
			return
		}
		r = r.WithContext(withSource(r.Context(), sourceOf(r.RemoteAddr)))
		c, ok := authenticateRequest(w, r, cfg, lim)
		if !ok {
			return
		}
		a := requestAttributes(r)
		done, ok := lim.admitIdentity(w, a, c.user.Name, c.node)
		if !ok {
			return
		}
		defer done()
		ctx, ok := authorizeRequest(w, r, cfg, c, a)
		if ok {
			serveLocal(w, r.WithContext(ctx), h, cfg.Operations)
		}
	})
}

// anonymousHealth is true for the terse health answers anyone may read:
// /livez, /readyz and /healthz with no query. Their details (?verbose,
// /readyz/<check>) need an authorized identity, as /metrics does.
func anonymousHealth(r *http.Request) bool {
	switch r.URL.Path {
	case caller.PathLivez, caller.PathReadyz, caller.PathHealthz:
		return r.URL.RawQuery == ""
	}
	return false
}

// authenticateRequest answers 401 (429 when its source's review budget is
// spent, 503 while the cloud sheds load) unless the request's caller is
// known, and refuses impersonation.
func authenticateRequest(w http.ResponseWriter, r *http.Request, cfg SecureConfig, lim *Limiter) (requester, bool) {
	c, err := cfg.Authenticator.authenticate(r)
	switch {
	case errors.Is(err, errReviewBudget):
		lim.tooManyRefused(w, err)
		return requester{}, false
	case errors.Is(err, errCloudBusy):
		unavailable(w, err.Error(), retryAfterOf(err))
		return requester{}, false
	case err != nil:
		lim.unauthorized(w, r)
		return requester{}, false
	}
	lim.authenticated(r)
	if impersonates(r) {
		forbidden(w, "impersonation is not supported through this door; send the request as yourself")
		return requester{}, false
	}
	return c, true
}

// authorizeRequest answers 403 unless c may do a, and returns the request
// context telling the proxy how to forward.
func authorizeRequest(w http.ResponseWriter, r *http.Request, cfg SecureConfig, c requester, a attributes) (context.Context, bool) {
	ctx := caller.WithUser(r.Context(), c.user)
	if c.node && !cfg.NeverForward && (nodeView(cfg, a) || ownEndpoint(r.URL.Path)) {
		return caller.AsNode(ctx), true // the node's own view, as the Node authorizer allows it
	}
	if !decide(w, r.Context(), cfg, c, a) {
		return nil, false
	}
	noteAuthorized(r.Context(), cfg, c, a)
	switch {
	case cfg.NeverForward:
		return caller.WithForward(ctx, nil, caller.ErrNotForwardable), true
	case c.node && cfg.ImpersonateNode && isWrite(a):
		return caller.AsNodeImpersonating(ctx, User{Name: c.user.Name, Groups: []string{nodesGroup}}), true
	case c.node:
		return caller.AsNode(ctx), true // authorized above for this very request
	case c.token == "" && isWrite(a):
		forbidden(w, caller.ErrNotForwardable.Error())
		return nil, false
	case c.token == "":
		return caller.WithForward(ctx, nil, caller.ErrNotForwardable), true
	}
	return caller.WithForward(ctx, cfg.Forwarder.For(c.token), nil), true
}

// decide asks the authorizer and answers 403 (or 503 while the cloud
// sheds load) unless c may do a.
func decide(w http.ResponseWriter, ctx context.Context, cfg SecureConfig, c requester, a attributes) bool {
	d, err := cfg.Authorizer.authorize(ctx, c.user, a)
	switch {
	case errors.Is(err, errReviewBudget):
		cfg.Limiter.tooManyRefused(w, err)
		return false
	case errors.Is(err, errCloudBusy):
		unavailable(w, err.Error(), retryAfterOf(err))
		return false
	case err != nil:
		forbidden(w, fmt.Sprintf("%s: cannot authorize user %q: %v", describe(a), c.user.Name, err))
		return false
	case !d.Allowed:
		msg := fmt.Sprintf("%s: user %q is not allowed", describe(a), c.user.Name)
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		forbidden(w, msg)
		return false
	}
	return true
}

// serveLocal answers the never-forwarded paths locally and passes the rest
// to h.
func serveLocal(w http.ResponseWriter, r *http.Request, h, ops http.Handler) {
	if caller.OperationsPath(r.URL.Path) {
		if ops == nil {
			notFound(w)
			return
		}
		ops.ServeHTTP(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// ownEndpoint is true for the daemon's own endpoints: health details,
// /metrics and /debug/pprof/. They describe this node's daemon, so this
// node's own identity reads them without asking the cloud (where
// system:node:<name> has no RBAC for them); anyone else needs the cloud's
// authorization for the non-resource URL.
func ownEndpoint(p string) bool {
	return caller.HealthPath(p) || caller.OperationsPath(p)
}

// impersonates is true for a request with any Impersonate-* header.
func impersonates(r *http.Request) bool {
	for name := range r.Header {
		if strings.HasPrefix(strings.ToLower(name), "impersonate-") {
			return true
		}
	}
	return false
}

func isWrite(a attributes) bool {
	switch a.Verb {
	case "get", "list", "watch", "head":
		return false
	}
	return true
}

// describe names a request in kube-apiserver's forbidden-message style.
func describe(a attributes) string {
	if !a.ResourceRequest {
		return fmt.Sprintf("%s %q", a.Verb, a.Path)
	}
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	s := fmt.Sprintf("%s %s", a.Verb, res)
	if a.Name != "" {
		s += fmt.Sprintf(" %q", a.Name)
	}
	if a.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", a.Namespace)
	}
	return s
}
