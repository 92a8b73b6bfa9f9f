package holding

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/readcache"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/tokencache"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// MetaAnswers keeps answers of the cloud in the metastore's meta table.
type MetaAnswers struct{ Store *metastore.Store }

// Put stores value at key.
func (s MetaAnswers) Put(ctx context.Context, key string, value []byte) error {
	return s.Store.PutMeta(ctx, key, value)
}

// Lookup returns the value at key; false if none is stored.
func (s MetaAnswers) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := s.Store.GetMeta(ctx, key)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// Delete removes key.
func (s MetaAnswers) Delete(ctx context.Context, key string) error {
	return s.Store.DeleteMeta(ctx, key)
}

// WithStoredAnswers answers the kubelet's TokenRequests, and in node
// scope GETs of kinds a node may get but not list, from the store while
// the cloud is unreachable. Tokens go to tokens, bound to pods held in
// caches.
func WithStoredAnswers(h http.Handler, res []cloudsync.Resource, store *metastore.Store, tokens tokencache.Store,
	caches []*versioncache.Cache, node string, link *link.Link, log *slog.Logger) http.Handler {
	answers := MetaAnswers{store}
	for _, r := range res {
		if r.OnDemand { // node scope: get-only kinds are not synced
			h = readcache.Wrap(h, readcache.Config{Store: answers, Connected: link.Connected, Logger: log})
			break
		}
	}
	return tokencache.Wrap(h, tokencache.Config{Store: tokens, Connected: link.Connected, Logger: log,
		FromNode: fromNode(node), HeldPod: HeldPod(caches)})
}

// TokenForgetter removes the stored tokens of pods deleted from the
// node's pods cache; nil if pods are not synced.
func TokenForgetter(res []cloudsync.Resource, caches []*versioncache.Cache, tokens tokencache.PrefixDeleter, log *slog.Logger) func(context.Context) error {
	for i, r := range res {
		if r.GVR == PodsGVR {
			return func(ctx context.Context) error { return tokencache.ForgetDeletedPods(ctx, caches[i], tokens, log) }
		}
	}
	return nil
}

// fromNode reports whether a request carries this node's own identity:
// no authenticated user (the node's loopback door) or the node's user.
func fromNode(node string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		u, ok := caller.UserFrom(r.Context())
		return !ok || u.Name == "" || (u.Name == nodeUserPrefix+node && slices.Contains(u.Groups, nodesGroup))
	}
}
