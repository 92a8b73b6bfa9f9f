package snapshot

import (
	"context"
	"fmt"
	"io"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// leavesOut are the meta prefixes a snapshot leaves out: every stored
// answer (offline.Kinds), among them every credential the node holds (its
// stored TokenRequest answers, the TLS door's reviewed tokens). The TLS
// door's key lives outside the database.
var leavesOut = offline.Prefixes()

// Save copies the store at db to file with VACUUM INTO from a read-only
// connection: consistent while the daemon runs, and only for a user who
// may read the data dir (the copy holds every synced Secret). It says
// what the copy holds on out.
func Save(ctx context.Context, db, file string, out io.Writer) error {
	if err := metastore.Backup(ctx, db, file, leavesOut...); err != nil {
		return err
	}
	rep, err := metastore.Inspect(ctx, file, metastore.NodeNameKey)
	if err != nil {
		return err
	}
	sealed := "Secrets in plaintext"
	if rep.Sealed {
		sealed = "Secrets encrypted with the state key"
	}
	_, err = fmt.Fprintf(out, "snapshot %s: node %q, %d resources, integrity %s, %s, no credentials\n",
		file, rep.Meta[metastore.NodeNameKey], len(rep.Resources), rep.Integrity, sealed)
	return err
}
