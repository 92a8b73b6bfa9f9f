package main

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
	scopeAuto    = "auto"
	scopeNode    = "node"
	scopeCluster = "cluster"
)

// scopeMetaKey is the metastore meta key of the scope auto chose last, so
// that an offline restart makes the same choice.
const scopeMetaKey = "sync-scope"

// Node identities, as the Node authorizer recognises them.
const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// selfReviewTimeout bounds one SelfSubjectReview; an unreachable cloud
// then falls back to the stored choice.
const selfReviewTimeout = 10 * time.Second

// startupPatience bounds the wait for the cloud's answer when startup can
// go on without it: in node scope, and in auto scope with an earlier
// choice stored. A cloud that accepts connections but does not answer (an
// overloaded API server, a half-open link) would otherwise keep the local
// API closed for selfReviewTimeout at every restart; the stored choice is
// the cloud's own earlier answer.
const startupPatience = time.Second

// errWrongNode is returned when the credentials belong to another node.
var errWrongNode = errors.New("credentials are another node's")

// errNotNode is returned by auto for credentials that are not a node's:
// holding the cluster-wide resources list on them is an explicit choice.
var errNotNode = errors.New("sync-scope auto runs node scope only, and the credentials are not a node's")

// scopeBackoff spaces SelfSubjectReview retries while the cloud is
// unreachable and no earlier choice is stored: there is nothing to serve
// yet, so startup waits for the cloud.
var scopeBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 30 * time.Second}

// whoAmI returns the cloud's view of the daemon's identity.
type whoAmI func(ctx context.Context) (authenticationv1.UserInfo, error)

// selfReview asks the cloud with a SelfSubjectReview.
func selfReview(cloud *rest.Config) (whoAmI, error) {
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
		return scopeCluster, nil
	}
	if name != nodeName {
		return "", fmt.Errorf("%w: the cloud knows them as node %q, but node-name is %q", errWrongNode, name, nodeName)
	}
	return scopeNode, nil
}

// resolveScope returns the scope to run in. For auto it asks the cloud
// and stores the answer; while the cloud is unreachable it uses the stored
// answer, or cluster for a store an earlier version filled, and otherwise
// waits for the cloud. node also checks, when the cloud answers, that the
// credentials are not another node's.
func resolveScope(ctx context.Context, configured, nodeName string, ask whoAmI, store *metastore.Store, log *slog.Logger) (string, error) {
	if configured == scopeCluster {
		return scopeCluster, nil
	}
	delay := scopeBackoff
	for {
		u, err := askPatiently(ctx, configured, ask, store)
		if err == nil {
			scope, err := scopeOf(u, nodeName)
			if err != nil || configured == scopeNode {
				return scopeNode, err
			}
			if scope != scopeNode {
				return "", notNode(u.Username)
			}
			log.Info("sync scope chosen", "scope", scope, "user", u.Username)
			return scope, store.PutMeta(ctx, scopeMetaKey, []byte(scope))
		}
		if configured == scopeNode {
			return scopeNode, nil
		}
		if scope, ok, serr := storedScope(ctx, store); serr != nil || ok {
			if serr == nil && scope != scopeNode {
				return "", notNode("(stored) " + scope + " scope")
			}
			log.Info("cloud unreachable, using the stored sync scope", "scope", scope, "err", err)
			return scope, serr
		}
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return "", fmt.Errorf("choose sync scope: %w", err)
		}
		log.Warn("cloud unreachable and no sync scope stored, retrying", "err", err)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(delay.Step()):
		}
	}
}

// notNode explains errNotNode for the identity who.
func notNode(who string) error {
	return fmt.Errorf("%w (%s): to hold the configured resources list with these credentials, "+
		"set --sync-scope=cluster explicitly; for a node, use its own kubelet credentials", errNotNode, who)
}

// askPatiently asks the cloud, within startupPatience when startup can go
// on without an answer.
func askPatiently(ctx context.Context, configured string, ask whoAmI, store *metastore.Store) (authenticationv1.UserInfo, error) {
	patient := configured == scopeNode
	if !patient {
		_, stored, err := storedScope(ctx, store)
		patient = err == nil && stored
	}
	if patient {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startupPatience)
		defer cancel()
	}
	return ask(ctx)
}

// storedScope returns the scope stored by an earlier run. A store filled by
// a version without scopes ran in cluster scope.
func storedScope(ctx context.Context, store *metastore.Store) (string, bool, error) {
	raw, err := store.GetMeta(ctx, scopeMetaKey)
	switch {
	case err == nil:
		s := string(raw)
		if s != scopeNode && s != scopeCluster {
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
	return scopeCluster, len(keys) > 0, nil
}
