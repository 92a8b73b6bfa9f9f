package holding

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Scoped settles the sync scope (Resolve, asking the cloud who the node's
// credentials are) and returns it, what is held in it (configured in
// cluster scope, node scope's set else) and the background check of a
// scope taken without the cloud (nil if none).
func Scoped(ctx context.Context, want, nodeName string, configured []cloudsync.Resource, cloud *rest.Config,
	store *metastore.Store, log *slog.Logger) (string, []cloudsync.Resource, Check, error) {
	ask, err := SelfReview(cloud)
	if err != nil {
		return "", nil, nil, err
	}
	scope, check, err := Resolve(ctx, want, nodeName, ask, store, log)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sync scope: %w", err)
	}
	log.Info("sync scope", "scope", scope, "configured", want)
	if scope == ScopeCluster {
		return scope, configured, check, nil
	}
	return scope, NodeResources(nodeName), check, nil
}

// VerifierConfig is the local verification of the node's pods' service-
// account tokens: the cloud's issuer and audiences (empty: learnt), and
// what it reads the pods and the cloud's keys with.
type VerifierConfig struct {
	NodeName, Issuer string
	Audiences        []string
	Cloud            *rest.Config
	// Caches are the local API's caches: the node's pods among them.
	Caches []*versioncache.Cache
	Store  satoken.Store
	Logger *slog.Logger
}

// NewVerifier builds the verifier of the node's pods' service-account
// tokens, reading the cloud's keys on a token the node mints for one of
// its pods, and loads the keys it stored.
func NewVerifier(ctx context.Context, c VerifierConfig) (*satoken.Verifier, error) {
	nodeMint, err := NodeTokenCreator(c.Cloud)
	if err != nil {
		return nil, err
	}
	fetch, err := satoken.CloudFetcher(c.Cloud, KeyReaderMinter(c.Caches, nodeMint), nil)
	if err != nil {
		return nil, err
	}
	sas, err := satoken.CloudServiceAccounts(c.Cloud)
	if err != nil {
		return nil, err
	}
	v := satoken.New(satoken.Config{NodeName: c.NodeName, Issuer: c.Issuer, Audiences: c.Audiences,
		Fetch: fetch, Pods: PodGetter(c.Caches), ServiceAccounts: sas, Store: c.Store, Logger: c.Logger})
	v.Load(ctx)
	return v, nil
}

// Syncers are the sync loops of what the node lists and watches on its
// own credentials: every resource of res (caches in its order) but those
// held by reference (OnDemand: demand's) or for pods (ForPods: forpods'),
// which are synced elsewhere. Each is base with its resource and cache,
// read through raw from its Upstream (leader: the pool's, nil for none)
// and relisted lean through raw and meta.
func Syncers(base cloudsync.Config, raw *cloudsync.RawClient, meta metadata.Interface, res []cloudsync.Resource,
	caches []*versioncache.Cache, leader func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext) []*cloudsync.Syncer {
	upstream := Upstream(res, leader)
	out := make([]*cloudsync.Syncer, 0, len(res))
	for i, r := range res {
		if r.OnDemand || r.ForPods {
			continue
		}
		c := base
		c.Resource, c.Cache = r, caches[i]
		c.ListerWatcher, c.Lean = upstream(r, raw.ListerWatcher(r)), cloudsync.NewLeanSource(raw, meta, r)
		out = append(out, cloudsync.New(c))
	}
	return out
}
