package holding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	authv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
)

// The values of --sync-scope.
const (
	ScopeAuto    = "auto"
	ScopeNode    = "node"
	ScopeCluster = "cluster"
)

// MetaKey is the metastore meta key of the scope auto chose last, so
// that an offline restart makes the same choice.
const MetaKey = "sync-scope"

// Node identities, as the Node authorizer recognises them.
const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// selfReviewTimeout bounds one SelfSubjectReview; an unreachable cloud
// then falls back to the stored choice.
const selfReviewTimeout = 10 * time.Second

// StartupPatience bounds the wait of the sync loops for the cloud's first
// answer on the scope startup took without it. A cloud that accepts
// connections but does not answer (an overloaded API server, a half-open
// link) would otherwise hold them for selfReviewTimeout; past it they sync
// unconfirmed, as offline, while the check goes on.
const StartupPatience = time.Second

// ErrWrongNode is returned when the credentials belong to another node.
var ErrWrongNode = errors.New("credentials are another node's")

// ErrNotNode is returned by auto for credentials that are not a node's:
// holding the cluster-wide resources list on them is an explicit choice.
var ErrNotNode = errors.New("sync-scope auto runs node scope only, and the credentials are not a node's")

// notNode explains ErrNotNode for the identity who.
func notNode(who string) error {
	return fmt.Errorf("%w (%s): to hold the configured resources list with these credentials, "+
		"set --sync-scope=cluster explicitly; for a node, use its own kubelet credentials", ErrNotNode, who)
}

// scopeBackoff spaces SelfSubjectReview retries while the cloud is
// unreachable and no earlier choice is stored: there is nothing to serve
// yet, so startup waits for the cloud.
var scopeBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 30 * time.Second}

// WhoAmI returns the cloud's view of the daemon's identity.
type WhoAmI func(ctx context.Context) (authenticationv1.UserInfo, error)

// SelfReview asks the cloud with a SelfSubjectReview on cloud's
// connection: the daemon's cloud configuration keeps one transport for the
// node's credentials (link.ConfigureTransport), so the connection the
// review leaves open at start is the one the syncs go on to use, and
// closing it would cost the cloud a second TLS handshake.
func SelfReview(cloud *rest.Config) (WhoAmI, error) {
	c, err := authv1client.NewForConfig(cloud)
	if err != nil {
		return nil, fmt.Errorf("cloud client: %w", err)
	}
	return func(ctx context.Context) (authenticationv1.UserInfo, error) {
		ctx, cancel := context.WithTimeout(ctx, selfReviewTimeout)
		defer cancel()
		r, err := c.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return authenticationv1.UserInfo{}, fmt.Errorf("self subject review: %w", err)
		}
		return r.Status.UserInfo, nil
	}, nil
}

// scopeOf is the scope for a user: node for system:node:<nodeName> in
// group system:nodes, an error for another node's, else cluster.
func scopeOf(u authenticationv1.UserInfo, nodeName string) (string, error) {
	name, isNode := strings.CutPrefix(u.Username, nodeUserPrefix)
	if !isNode || !slices.Contains(u.Groups, nodesGroup) {
		return ScopeCluster, nil
	}
	if name != nodeName {
		return "", fmt.Errorf("%w: the cloud knows them as node %q, but node-name is %q", ErrWrongNode, name, nodeName)
	}
	return ScopeNode, nil
}

// Check confirms with the cloud a scope startup took without asking
// it: it returns nil once confirmed, an error if the cloud contradicts it,
// or ctx.Err(). It calls unconfirmed, once, if the cloud did not answer
// within StartupPatience.
type Check func(ctx context.Context, unconfirmed func()) error

// Resolve returns the scope to run in. Serving never waits for the
// cloud when startup can go on without it: in node scope, and in auto
// scope with an earlier choice stored (the cloud's own earlier answer, or
// cluster for a store an earlier version filled), the scope is returned
// at once with a check that asks the cloud, which the sync loops wait for
// (see scopeGate). Otherwise
// auto asks the cloud, storing the answer, and waits for it while it is
// unreachable.
func Resolve(ctx context.Context, configured, nodeName string, ask WhoAmI, store *metastore.Store, log *slog.Logger) (string, Check, error) {
	if configured == ScopeCluster {
		return ScopeCluster, nil, nil
	}
	if configured == ScopeNode {
		return ScopeNode, checkScope(configured, ScopeNode, nodeName, ask, store, log), nil
	}
	if scope, ok, err := storedScope(ctx, store); err != nil || ok {
		if err == nil && scope != ScopeNode {
			return "", nil, notNode("the stored " + scope + " scope")
		}
		return scope, checkScope(configured, scope, nodeName, ask, store, log), err
	}
	delay := scopeBackoff
	for {
		u, err := ask(ctx)
		if err == nil {
			scope, err := scopeOf(u, nodeName)
			if err != nil {
				return "", nil, err
			}
			if scope != ScopeNode {
				return "", nil, notNode(u.Username)
			}
			log.Info("sync scope chosen", "scope", scope, "user", u.Username)
			return scope, nil, store.PutMeta(ctx, MetaKey, []byte(scope))
		}
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return "", nil, fmt.Errorf("choose sync scope: %w", err)
		}
		log.Warn("cloud unreachable and no sync scope stored, retrying", "err", err)
		if err := sleepCtx(ctx, delay.Step()); err != nil {
			return "", nil, err
		}
	}
}

// checkScope returns the check of scope, taken at startup without the
// cloud: it asks the cloud until it answers, then fails if the
// credentials are another node's or, in auto scope, not a node's. A cloud that refuses to
// answer confirms nothing but is not asked again.
func checkScope(configured, scope, nodeName string, ask WhoAmI, store *metastore.Store, log *slog.Logger) Check {
	return func(ctx context.Context, unconfirmed func()) error {
		delay := scopeBackoff
		for first := true; ; first = false {
			u, err := askWithin(ctx, ask, first)
			if err == nil {
				return confirmScope(configured, scope, nodeName, u)
			}
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				log.Warn("the cloud refuses to confirm the sync scope", "scope", scope, "err", err)
				return nil
			}
			if first {
				log.Info("cloud did not confirm the sync scope yet, syncing in the stored one", "scope", scope, "err", err)
				unconfirmed()
			}
			if err := sleepCtx(ctx, delay.Step()); err != nil {
				return err
			}
		}
	}
}

// askWithin asks the cloud, within StartupPatience the first time.
func askWithin(ctx context.Context, ask WhoAmI, first bool) (authenticationv1.UserInfo, error) {
	if first {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StartupPatience)
		defer cancel()
	}
	return ask(ctx)
}

// confirmScope checks the cloud's answer u against scope: another node's
// credentials, or in auto scope credentials that are not a node's, fail.
func confirmScope(configured, scope, nodeName string, u authenticationv1.UserInfo) error {
	answer, err := scopeOf(u, nodeName)
	if err != nil {
		return err
	}
	if configured == ScopeAuto && answer != scope {
		return notNode(u.Username)
	}
	return nil
}

// sleepCtx waits d, or returns ctx.Err() when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// storedScope returns the scope stored by an earlier run. A store filled by
// a version without scopes ran in cluster scope.
func storedScope(ctx context.Context, store *metastore.Store) (string, bool, error) {
	raw, err := store.GetMeta(ctx, MetaKey)
	switch {
	case err == nil:
		s := string(raw)
		if s != ScopeNode && s != ScopeCluster {
			return "", false, fmt.Errorf("stored sync scope %q is invalid", s)
		}
		return s, true, nil
	case !errors.Is(err, metastore.ErrNotFound):
		return "", false, err
	}
	keys, err := store.Resources(ctx)
	if err != nil {
		return "", false, err
	}
	return ScopeCluster, len(keys) > 0, nil
}
