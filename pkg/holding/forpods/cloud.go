package forpods

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
)

// tokenSeconds is the lifetime asked of each token: an hour, as the
// kubelet asks for projected tokens, renewed at renewFraction of it.
const tokenSeconds = 3600

// NodeMinter requests tokens with the node's credentials (cloud). The
// Node authorizer and NodeRestriction allow a node exactly this: a token
// for the service account of a pod bound to it, bound to that pod, for
// the API server's default audience (the automounted token's).
func NodeMinter(cloud *rest.Config) (Minter, error) {
	return NodeMinterFor(cloud, nil)
}

// NodeMinterFor is NodeMinter for audiences (nil: the API server's). The
// node may mint for an audience only when the pod names it in a projected
// token volume (ServiceAccountNodeAudienceRestriction).
func NodeMinterFor(cloud *rest.Config, audiences []string) (Minter, error) {
	cs, err := kubernetes.NewForConfig(cloud)
	if err != nil {
		return nil, fmt.Errorf("token client: %w", err)
	}
	return func(ctx context.Context, pod door.Pod) (string, time.Time, error) {
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: new(int64(tokenSeconds)), Audiences: audiences,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: types.UID(pod.UID)},
		}}
		got, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.ServiceAccount, req, metav1.CreateOptions{})
		if err != nil {
			return "", time.Time{}, fmt.Errorf("request a token for %s/%s: %w", pod.Namespace, pod.ServiceAccount, err)
		}
		return got.Status.Token, got.Status.ExpirationTimestamp.Time, nil
	}, nil
}

// SyncDeps are what a holding's sync shares with the daemon's others.
type SyncDeps struct {
	// Cloud is the daemon's cloud configuration; its address and CA are
	// used, never its credentials.
	Cloud     *rest.Config
	Conns     *link.Conns
	Discovery cloudsync.Discoverer
	Store     cloudsync.Store
	Link      *link.Link
	Observer  cloudsync.Observer
	Logger    *slog.Logger
	// Pool, when set, is the resource's upstream in a pool (docs/pool.md):
	// given the cloud's lister and watcher and the owner pod the sync
	// runs as now, it returns the one the sync uses.
	Pool func(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, identity func() (door.Pod, bool)) cache.ListerWatcherWithContext
	// Wrap, when set, wraps the transport of the resource's cloud reads
	// (the pool's byte counts).
	Wrap func(r cloudsync.Resource) transport.WrapperFunc
}

// CloudSync returns the Syncer that lists and watches a held resource
// through the same path as every other resource, on the holding's tokens.
func CloudSync(d SyncDeps) Syncer {
	return func(ctx context.Context, h Held, tokens oauth2.TokenSource) error {
		cfg := TokenConfig(d.Cloud, d.Conns, tokens)
		if d.Wrap != nil {
			cfg.Wrap(d.Wrap(h.Resource))
		}
		raw, err := cloudsync.NewRawClient(cfg)
		if err != nil {
			return err
		}
		meta, err := metadata.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("metadata client: %w", err)
		}
		s := cloudsync.New(cloudsync.Config{Resource: h.Resource, ListerWatcher: d.upstream(h.Resource, raw.ListerWatcher(h.Resource), tokens),
			Discovery: d.Discovery, Store: d.Store, Cache: h.Cache, Link: d.Link, Logger: d.Logger,
			Observer: d.Observer, Lean: cloudsync.NewLeanSource(raw, meta, h.Resource)})
		return s.Run(ctx)
	}
}

// upstream is r's lister and watcher: the cloud's, or in a pool the one
// Pool picks, told which owner the sync runs as.
func (d SyncDeps) upstream(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, tokens oauth2.TokenSource) cache.ListerWatcherWithContext {
	id, ok := tokens.(interface{ Identity() (door.Pod, bool) })
	if d.Pool == nil || !ok {
		return cloud
	}
	return d.Pool(r, cloud, func() (door.Pod, bool) {
		if _, err := tokens.Token(); err != nil { // the owner is chosen when its token is minted
			return door.Pod{}, false
		}
		return id.Identity()
	})
}

// TokenConfig is cloud's address and CA with tokens as the only
// credential: a client certificate would win over the token at the cloud.
// A source that can be told of refusals (syncTokens) is told of every 401
// or 403 to a request on one of its tokens, and reset.
func TokenConfig(cloud *rest.Config, conns *link.Conns, tokens oauth2.TokenSource) *rest.Config {
	cfg := rest.AnonymousClientConfig(cloud)
	if r, ok := tokens.(refusable); ok {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &refusalWatch{next: rt, tokens: r} })
		cfg.Wrap(transport.ResettableTokenSourceWrapTransport(r)) // outside: sets the header the watch reads
	} else {
		cfg.Wrap(transport.TokenSourceWrapTransport(tokens))
	}
	link.ConfigureTransport(cfg, conns)
	return cfg
}

// refusable is a token source told when the cloud refuses one of its
// tokens.
type refusable interface {
	transport.ResettableTokenSource
	Refused(token string, code int)
}

// refusalWatch tells tokens of every 401 or 403 the cloud answers to a
// request bearing one of them.
type refusalWatch struct {
	next   http.RoundTripper
	tokens refusable
}

func (w *refusalWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		w.tokens.Refused(bearerOf(r), resp.StatusCode)
	}
	return resp, err
}

// WrappedRoundTripper lets client-go find the transport underneath.
func (w *refusalWatch) WrappedRoundTripper() http.RoundTripper { return w.next }
