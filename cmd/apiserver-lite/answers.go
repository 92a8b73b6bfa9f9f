package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/readcache"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/tokencache"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// metaAnswers keeps answers of the cloud in the metastore's meta table.
type metaAnswers struct{ store *metastore.Store }

func (s metaAnswers) Put(ctx context.Context, key string, value []byte) error {
	return s.store.PutMeta(ctx, key, value)
}

func (s metaAnswers) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := s.store.GetMeta(ctx, key)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (s metaAnswers) Delete(ctx context.Context, key string) error {
	return s.store.DeleteMeta(ctx, key)
}

// withStoredAnswers answers the kubelet's TokenRequests, and in node scope
// GETs of kinds a node may get but not list, from the store while the
// cloud is unreachable. Tokens go to tokens, bound to pods held in caches.
func withStoredAnswers(h http.Handler, res []cloudsync.Resource, store *metastore.Store, tokens tokencache.Store,
	caches []*versioncache.Cache, node string, link *cloudsync.Link, log *slog.Logger) http.Handler {
	answers := metaAnswers{store}
	for _, r := range res {
		if r.OnDemand { // node scope: get-only kinds are not synced
			h = readcache.Wrap(h, readcache.Config{Store: answers, Connected: link.Connected, Logger: log})
			break
		}
	}
	return tokencache.Wrap(h, tokencache.Config{Store: tokens, Connected: link.Connected, Logger: log,
		FromNode: fromNode(node), HeldPod: podLookup(caches)})
}

// tokenForgetter removes the stored tokens of pods deleted from the node's
// pods cache; nil if pods are not synced.
func tokenForgetter(res []cloudsync.Resource, caches []*versioncache.Cache, tokens tokencache.PrefixDeleter, log *slog.Logger) func(context.Context) error {
	for i, r := range res {
		if r.GVR == holding.PodsGVR {
			return func(ctx context.Context) error { return tokencache.ForgetDeletedPods(ctx, caches[i], tokens, log) }
		}
	}
	return nil
}
