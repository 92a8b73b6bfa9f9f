package atrest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
)

// sealedMetaPrefixes are the meta keys whose values are credentials:
// stored TokenRequest answers and reviewed tokens (offline.Kinds).
var sealedMetaPrefixes = offline.SealedPrefixes()

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

// NoKeyNote is the /readyz?verbose line and the log line of a daemon
// without a state key.
const NoKeyNote = "no encryption-key-file: Secrets are stored in plaintext and TokenRequest answers are kept in memory only, so pods with projected tokens cannot start after an offline reboot"

// StateSealing reads the state key in keyFile, if one is configured, and
// says what the store in dataDir seals with it. Without a key the Sealer is
// nil: plaintext.
func StateSealing(keyFile, dataDir string) (metastore.Sealing, error) {
	if keyFile == "" {
		return metastore.Sealing{Resource: sealedResource, Meta: sealedMeta}, nil
	}
	if err := KeyOutsideDataDir(keyFile, dataDir); err != nil {
		return metastore.Sealing{}, err
	}
	key, err := seal.ReadKeyFile(keyFile)
	if err != nil {
		return metastore.Sealing{}, err
	}
	a, err := seal.New(key)
	if err != nil {
		return metastore.Sealing{}, fmt.Errorf("encryption key file %s: %w", keyFile, err)
	}
	return metastore.Sealing{Sealer: a, Resource: sealedResource, Meta: sealedMeta}, nil
}

// KeyOutsideDataDir refuses a key file inside the data dir: a stolen disk
// or copied data dir would carry its own key.
func KeyOutsideDataDir(keyFile, dataDir string) error {
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

// OpenStoreError says which key file a refused database in dataDir needs.
func OpenStoreError(err error, keyFile, dataDir string) error {
	switch {
	case errors.Is(err, metastore.ErrWrongKey):
		return fmt.Errorf("encryption key file %s does not open the state in %s (it was sealed with another key; nothing was changed): %w",
			keyFile, dataDir, err)
	case errors.Is(err, metastore.ErrKeyRequired):
		return fmt.Errorf("the state in %s is encrypted: set encryption-key-file to the key it was sealed with (nothing was changed): %w",
			dataDir, err)
	}
	return err
}
