//go:build e2e

package framework

import (
	"crypto/rand"
	"os"
	"path/filepath"
)

// stateKeySize is the size of apiserver-lite's state key in bytes.
const stateKeySize = 32

// writeStateKey writes a new state key beside (not inside) the edge's data
// dir, as keygen would, unless Options.NoEncryptionKey.
func (c *Cluster) writeStateKey() {
	c.t.Helper()
	if c.opts.NoEncryptionKey {
		return
	}
	key := make([]byte, stateKeySize)
	if _, err := rand.Read(key); err != nil {
		c.t.Fatalf("state key: %v", err)
	}
	c.EncryptionKeyFile = filepath.Join(c.Dir, "state.key")
	if err := os.WriteFile(c.EncryptionKeyFile, key, 0o600); err != nil {
		c.t.Fatalf("state key: %v", err)
	}
}

// EdgeDataDir is apiserver-lite's --data-dir.
func (c *Cluster) EdgeDataDir() string { return filepath.Join(c.Dir, edgeDataDir) }
