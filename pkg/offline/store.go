package offline

import (
	"context"
	"errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// Store keeps answers durably. Keys are opaque to it (hashes or paths,
// never a token). Get returns ok false for a key never stored; Delete of
// such a key is not an error. MetaUsage says how many values, and how many
// bytes, are stored under a prefix, so that quotas hold across restarts;
// PruneMeta makes room within one.
type Store interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Put(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
	MetaUsage(ctx context.Context, prefix string) (metastore.MetaUsage, error)
	Pruner
}

// Pruner deletes the stored values under a key prefix that dead reports,
// and returns how many it deleted.
type Pruner interface {
	PruneMeta(ctx context.Context, prefix string, dead func(value []byte) bool) (int, error)
}

// PrefixDeleter removes stored values by key prefix.
type PrefixDeleter interface {
	DeleteMetaPrefix(ctx context.Context, prefix string) error
}

// MetaStore keeps answers in the metastore's meta table.
type MetaStore struct{ Store *metastore.Store }

var _ Store = MetaStore{}

// Get returns the value at key; false if none is stored.
func (s MetaStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := s.Store.GetMeta(ctx, key)
	if errors.Is(err, metastore.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// Put stores value at key.
func (s MetaStore) Put(ctx context.Context, key string, value []byte) error {
	return s.Store.PutMeta(ctx, key, value)
}

// Delete removes key.
func (s MetaStore) Delete(ctx context.Context, key string) error {
	return s.Store.DeleteMeta(ctx, key)
}

// MetaUsage counts the values under prefix.
func (s MetaStore) MetaUsage(ctx context.Context, prefix string) (metastore.MetaUsage, error) {
	return s.Store.MetaUsage(ctx, prefix)
}

// PruneMeta deletes the values under prefix that dead reports.
func (s MetaStore) PruneMeta(ctx context.Context, prefix string, dead func([]byte) bool) (int, error) {
	return s.Store.PruneMeta(ctx, prefix, dead)
}
