package auth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// LoopbackConfig wires the loopback door.
type LoopbackConfig struct {
	// Operations serves /metrics and /debug/pprof/; nil answers 404.
	Operations http.Handler
	Limiter    *Limiter
}

// SecureConfig wires the TLS door.
type SecureConfig struct {
	Authenticator *Authenticator
	Authorizer    *Authorizer
	Forwarder     *Forwarder
	// Operations serves /metrics and /debug/pprof/ to authorized callers;
	// nil answers 404.
	Operations http.Handler
	Limiter    *Limiter
}

// loopbackIdentity names every loopback caller for the watch cap: the
// door does not tell local processes apart.
const loopbackIdentity = "loopback"

// Loopback wraps the local API h as the loopback door: loopback Host
// headers only, limits, and the never-forwarded paths.
func Loopback(h http.Handler, cfg LoopbackConfig) http.Handler {
	lim := cfg.Limiter
	if lim == nil {
		lim = NewLimiter(Limits{})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !checkHost(w, r) {
			return
		}
		release, ok := lim.admit(w, isWatch(r), loopbackIdentity)
		if !ok {
			return
		}
		defer release()
		serveLocal(w, r, h, cfg.Operations)
	})
}

// Secure wraps the local API h as the TLS door: health is anonymous;
// everything else is authenticated, authorized and limited.
func Secure(h http.Handler, cfg SecureConfig) http.Handler {
	lim := cfg.Limiter
	if lim == nil {
		lim = NewLimiter(Limits{})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if healthPath(r.URL.Path) {
			release, ok := lim.admit(w, false, "")
			if ok {
				defer release()
				h.ServeHTTP(w, r)
			}
			return
		}
		c, err := cfg.Authenticator.authenticate(r)
		if err != nil {
			unauthorized(w)
			return
		}
		if impersonates(r) {
			forbidden(w, "impersonation is not supported through this door; send the request as yourself")
			return
		}
		a := requestAttributes(r)
		release, ok := lim.admit(w, a.Verb == "watch", c.user.Name)
		if !ok {
			return
		}
		defer release()
		ctx, ok := authorizeRequest(w, r, cfg, c, a)
		if ok {
			serveLocal(w, r.WithContext(ctx), h, cfg.Operations)
		}
	})
}

// authorizeRequest answers 403 unless c may do a, and returns the request
// context telling the proxy how to forward.
func authorizeRequest(w http.ResponseWriter, r *http.Request, cfg SecureConfig, c caller, a attributes) (context.Context, bool) {
	ctx := context.WithValue(r.Context(), userKey{}, c.user)
	if c.node {
		return withForward(ctx, nil, nil), true // the loopback door's rights
	}
	d, err := cfg.Authorizer.authorize(r.Context(), c.user, a)
	if err != nil {
		forbidden(w, fmt.Sprintf("%s: cannot authorize user %q: %v", describe(a), c.user.Name, err))
		return nil, false
	}
	if !d.Allowed {
		msg := fmt.Sprintf("%s: user %q is not allowed", describe(a), c.user.Name)
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		forbidden(w, msg)
		return nil, false
	}
	if c.token == "" {
		if isWrite(a) {
			forbidden(w, ErrNotForwardable.Error())
			return nil, false
		}
		return withForward(ctx, nil, ErrNotForwardable), true
	}
	return withForward(ctx, cfg.Forwarder.For(c.token), nil), true
}

// serveLocal answers the never-forwarded paths locally and passes the rest
// to h.
func serveLocal(w http.ResponseWriter, r *http.Request, h, ops http.Handler) {
	if operationsPath(r.URL.Path) {
		if ops == nil {
			notFound(w)
			return
		}
		ops.ServeHTTP(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

func healthPath(p string) bool {
	for _, base := range []string{"/healthz", "/livez", "/readyz"} {
		if p == base || strings.HasPrefix(p, base+"/") {
			return true
		}
	}
	return false
}

// operationsPath is true for the daemon's own endpoints, which are never
// forwarded to the cloud.
func operationsPath(p string) bool {
	return p == "/metrics" || strings.HasPrefix(p, "/metrics/") || p == "/debug/pprof" || strings.HasPrefix(p, "/debug/pprof/")
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

func isWatch(r *http.Request) bool { return requestAttributes(r).Verb == "watch" }

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
