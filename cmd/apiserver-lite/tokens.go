package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/tokencache"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// tokenStore keeps TokenRequest answers in the metastore's meta table.
type tokenStore struct{ store *metastore.Store }

func (s tokenStore) Put(ctx context.Context, key string, value []byte) error {
	return s.store.PutMeta(ctx, key, value)
}

func (s tokenStore) Lookup(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := s.store.GetMeta(ctx, key)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// withTokenCache answers the kubelet's TokenRequests from the store while
// the cloud is unreachable.
func withTokenCache(h http.Handler, store *metastore.Store, link *cloudsync.Link, log *slog.Logger) http.Handler {
	return tokencache.Wrap(h, tokencache.Config{Store: tokenStore{store}, Connected: link.Connected, Logger: log})
}
