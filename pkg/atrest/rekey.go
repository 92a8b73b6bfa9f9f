package atrest

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// ErrStoreInUse is returned by Rekey while the store's write-ahead log
// exists: the daemon runs, or did not stop cleanly, and would go on
// sealing with the old key.
var ErrStoreInUse = errors.New("the daemon is running or did not stop cleanly; stop it (start and stop it once after a crash) and retry")

// Rekey re-encrypts the stopped daemon's store db (in dataDir), sealed
// with oldFile's key (none if empty), with newFile's in one transaction,
// and scrubs the old values from the WAL: until it commits the old key
// opens everything, after it only the new one does. It returns both
// sealings, for what else is sealed with the state key.
func Rekey(ctx context.Context, db, dataDir, oldFile, newFile string) (cur, next metastore.Sealing, err error) {
	if _, err := os.Stat(db + "-wal"); err == nil {
		return cur, next, fmt.Errorf("%s-wal exists: %w", db, ErrStoreInUse)
	}
	if next, err = StateSealing(newFile, dataDir); err != nil {
		return cur, next, err
	}
	if cur, err = StateSealing(oldFile, dataDir); err != nil {
		return cur, next, err
	}
	st, err := metastore.OpenWith(ctx, db, metastore.Options{Sealing: cur})
	if err != nil {
		return cur, next, OpenStoreError(err, oldFile, dataDir)
	}
	err = st.Rekey(ctx, next.Sealer)
	if err == nil {
		err = st.Scrub(ctx)
	}
	return cur, next, errors.Join(err, st.Close())
}
