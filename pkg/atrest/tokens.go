package atrest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// TokenStore is where the kubelet's TokenRequest answers are kept: the
// sealed store with a key, else memory only.
type TokenStore interface {
	offline.Store
	offline.PrefixDeleter
	offline.Pruner
}

// NewTokenStore returns the answers' store. Without a key it logs so,
// once, and removes (and scrubs) any token an earlier run stored on disk.
func NewTokenStore(ctx context.Context, store *metastore.Store, sealed bool, log *slog.Logger) (TokenStore, error) {
	if sealed {
		return ScrubbedAnswers{offline.MetaStore{Store: store}}, nil
	}
	log.Warn(NoKeyNote)
	if err := (ScrubbedAnswers{offline.MetaStore{Store: store}}).DeleteMetaPrefix(ctx, offline.TokenRequestPrefix); err != nil {
		return nil, fmt.Errorf("remove stored tokens: %w", err)
	}
	return offline.NewMemoryStore(), nil
}

// ScrubbedAnswers removes a deleted pod's stored tokens and scrubs their
// bytes from the disk, as for a deleted Secret.
type ScrubbedAnswers struct{ offline.MetaStore }

// DeleteMetaPrefix deletes the answers under prefix and scrubs them.
func (s ScrubbedAnswers) DeleteMetaPrefix(ctx context.Context, prefix string) error {
	if err := s.Store.DeleteMetaPrefix(ctx, prefix); err != nil {
		return err
	}
	if err := s.Store.Scrub(ctx); err != nil && !errors.Is(err, metastore.ErrBusy) {
		return err
	}
	return nil
}

// PruneMeta deletes the answers under prefix that dead says are past use.
func (s ScrubbedAnswers) PruneMeta(ctx context.Context, prefix string, dead func([]byte) bool) (int, error) {
	return s.Store.PruneMeta(ctx, prefix, dead)
}
