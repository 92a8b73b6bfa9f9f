package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/auth"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/tokencache"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

// sealedMetaPrefixes are the meta keys whose values are credentials:
// stored TokenRequest answers and reviewed tokens.
var sealedMetaPrefixes = []string{tokencache.Prefix, auth.TokenKeyPrefix}

// sealedResource reports whether a stored resource holds Secrets: core
// v1 secrets, listed or held on demand (its key is "/v1/secrets" with
// any selectors after "?").
func sealedResource(key string) bool {
	const secrets = "/v1/secrets"
	return key == secrets || strings.HasPrefix(key, secrets+"?")
}

// sealedMeta reports whether a meta key's value is sealed.
func sealedMeta(key string) bool {
	for _, p := range sealedMetaPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// noKeyNote is the /readyz?verbose line and the log line of a daemon
// without a state key.
const noKeyNote = "no encryption-key-file: Secrets are stored in plaintext and TokenRequest answers are kept in memory only, so pods with projected tokens cannot start after an offline reboot"

// stateSealing reads the state key, if one is configured, and says what
// the store seals with it. Without a key the Sealer is nil: plaintext.
func stateSealing(cfg config) (metastore.Sealing, error) {
	if cfg.EncryptionKeyFile == "" {
		return metastore.Sealing{Resource: sealedResource, Meta: sealedMeta}, nil
	}
	if err := keyOutsideDataDir(cfg.EncryptionKeyFile, cfg.DataDir); err != nil {
		return metastore.Sealing{}, err
	}
	key, err := seal.ReadKeyFile(cfg.EncryptionKeyFile)
	if err != nil {
		return metastore.Sealing{}, err
	}
	a, err := seal.New(key)
	if err != nil {
		return metastore.Sealing{}, fmt.Errorf("encryption key file %s: %w", cfg.EncryptionKeyFile, err)
	}
	return metastore.Sealing{Sealer: a, Resource: sealedResource, Meta: sealedMeta}, nil
}

// keyOutsideDataDir refuses a key file inside the data dir: a stolen disk
// or copied data dir would carry its own key.
func keyOutsideDataDir(keyFile, dataDir string) error {
	k, err1 := filepath.Abs(keyFile)
	d, err2 := filepath.Abs(dataDir)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if rel, err := filepath.Rel(d, k); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("encryption key file %s is inside data-dir %s: keep the key apart from the data it protects", keyFile, dataDir)
	}
	return nil
}

// openStoreError says which key file a refused database needs.
func openStoreError(err error, cfg config) error {
	switch {
	case errors.Is(err, metastore.ErrWrongKey):
		return fmt.Errorf("encryption key file %s does not open the state in %s (it was sealed with another key; nothing was changed): %w",
			cfg.EncryptionKeyFile, cfg.DataDir, err)
	case errors.Is(err, metastore.ErrKeyRequired):
		return fmt.Errorf("the state in %s is encrypted: set encryption-key-file to the key it was sealed with (nothing was changed): %w",
			cfg.DataDir, err)
	}
	return err
}

// tokenStore is where the kubelet's TokenRequest answers are kept: the
// sealed store with a key, else memory only.
type tokenStore interface {
	tokencache.Store
	tokencache.PrefixDeleter
	tokencache.Pruner
}

// newTokenStore returns the answers' store. Without a key it logs so,
// once, and removes (and scrubs) any token an earlier run stored on disk.
func newTokenStore(ctx context.Context, store *metastore.Store, sealed bool, log *slog.Logger) (tokenStore, error) {
	if sealed {
		return scrubbedAnswers{holding.MetaAnswers{Store: store}}, nil
	}
	log.Warn(noKeyNote)
	if err := (scrubbedAnswers{holding.MetaAnswers{Store: store}}).DeleteMetaPrefix(ctx, tokencache.Prefix); err != nil {
		return nil, fmt.Errorf("remove stored tokens: %w", err)
	}
	return tokencache.NewMemoryStore(), nil
}

// scrubbedAnswers removes a deleted pod's stored tokens and scrubs their
// bytes from the disk, as for a deleted Secret.
type scrubbedAnswers struct{ holding.MetaAnswers }

func (s scrubbedAnswers) DeleteMetaPrefix(ctx context.Context, prefix string) error {
	if err := s.Store.DeleteMetaPrefix(ctx, prefix); err != nil {
		return err
	}
	if err := s.Store.Scrub(ctx); err != nil && !errors.Is(err, metastore.ErrBusy) {
		return err
	}
	return nil
}

func (s scrubbedAnswers) PruneMeta(ctx context.Context, prefix string, dead func([]byte) bool) (int, error) {
	return s.Store.PruneMeta(ctx, prefix, dead)
}
