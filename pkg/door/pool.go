package door

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// notLeaderRetrySeconds is the Retry-After of a member that does not lead
// its pool: a follower reads the cloud meanwhile and asks the leader the
// Lease names at its next watch restart.
const notLeaderRetrySeconds = 10

// PoolConfig is what a pool door serves, and when (docs/pool.md).
type PoolConfig struct {
	// Serves reports whether the leader holds gvr whole and current, to
	// serve to the pool's other members.
	Serves func(gvr schema.GroupVersionResource) bool
	// Leading reports whether this member leads its pool (a member that
	// does not answers 503) and a channel closed at the next change of
	// leader: the requests it serves end then, so a leader that lost the
	// Lease serves no watch on.
	Leading func() (leading bool, changed <-chan struct{})
}

// Pool wraps an authenticated door (Secure, with NeverForward) as the pool
// door: it serves only get, list and watch of the pool-wide resources the
// leader holds, and only while it leads. Everything else (writes, token
// requests, subresources, discovery, what it does not hold) is 404 and
// never forwarded. Both refusals come before authentication, so they cost
// no review: the served set is the pool's, not a secret.
func Pool(secure http.Handler, cfg PoolConfig) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if anonymousHealth(r) {
			secure.ServeHTTP(w, r)
			return
		}
		leading, changed := cfg.Leading()
		if !leading {
			unavailable(w, "not the pool's leader: read the cloud, or the leader its Lease names", notLeaderRetrySeconds)
			return
		}
		if !poolServed(requestAttributes(r), cfg.Serves) {
			notFound(w)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-changed:
				cancel()
			case <-ctx.Done():
			}
		}()
		secure.ServeHTTP(w, r.WithContext(ctx))
	})
}

// poolServed is true for a read of a whole collection or one object of a
// resource the leader serves to its pool.
func poolServed(a attributes, serves func(schema.GroupVersionResource) bool) bool {
	if !a.ResourceRequest || a.Subresource != "" {
		return false
	}
	switch a.Verb {
	case "get", "list", "watch":
	default:
		return false
	}
	return serves(schema.GroupVersionResource{Group: a.Group, Version: a.Version, Resource: a.Resource})
}
