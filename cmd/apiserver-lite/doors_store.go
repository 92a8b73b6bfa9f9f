package main

import (
	"context"
	"errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// metaDecisions keeps the TLS door's reviewed tokens (by hash) and
// authorization decisions in the metastore's meta table.
type metaDecisions struct{ store *metastore.Store }

var _ door.DecisionStore = metaDecisions{}

func (s metaDecisions) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := s.store.GetMeta(ctx, key)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (s metaDecisions) Put(ctx context.Context, key string, value []byte) error {
	return s.store.PutMeta(ctx, key, value)
}

func (s metaDecisions) Delete(ctx context.Context, key string) error {
	return s.store.DeleteMeta(ctx, key)
}
