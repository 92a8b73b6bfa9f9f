package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// restoreSuffix names the temporary copy a restore checks before it
// replaces the store.
const restoreSuffix = ".restoring"

// sqliteSideFiles are the files SQLite keeps beside a database.
var sqliteSideFiles = []string{"-wal", "-shm", "-journal"}

// RestoreOptions are what a restore seeds, from what.
type RestoreOptions struct {
	// File is the snapshot.
	File string
	// DataDir is the data dir to seed, DBFile the store's name inside it
	// and DirMode the mode a missing data dir is created with.
	DataDir, DBFile string
	DirMode         os.FileMode
	// Node is the node the data dir is for.
	Node string
	// KeyFile is the state key an encrypted snapshot was sealed with.
	KeyFile string
	// Force replaces an existing store.
	Force bool
}

// refetchNote says what a node seeded from a snapshot fetches again.
const refetchNote = `not in the snapshot, fetched again from the cloud once it is reachable: projected service-account tokens
(pods with projected tokens start only after the kubelet's next TokenRequest reaches the cloud), the TLS door's
token reviews and authorization decisions, answers of get-only kinds; the TLS door generates its own serving key`

// Restore seeds a data dir from a snapshot, refusing a damaged snapshot,
// another node's snapshot and, without Force, an existing store. It says
// what it restored on out.
func Restore(ctx context.Context, o RestoreOptions, out io.Writer) error {
	rep, err := metastore.Inspect(ctx, o.File, metastore.NodeNameKey)
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	if rep.Integrity != "ok" {
		return fmt.Errorf("snapshot restore: %s is damaged: %s", o.File, rep.Integrity)
	}
	if from := string(rep.Meta[metastore.NodeNameKey]); from != "" && from != o.Node {
		return fmt.Errorf("snapshot restore: %s was taken on node %q and holds only what that node may read; refusing to seed node %q", o.File, from, o.Node)
	}
	dst := filepath.Join(o.DataDir, o.DBFile)
	if _, err := os.Stat(dst); err == nil && !o.Force {
		return fmt.Errorf("snapshot restore: %s already exists; stop the daemon and pass --force to replace it", dst)
	}
	sealing, err := restoreSealing(rep, o.KeyFile, o.DataDir)
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	if err := install(ctx, o.File, dst, o.DirMode, sealing); err != nil {
		return fmt.Errorf("snapshot restore: %w", atrest.OpenStoreError(err, o.KeyFile, o.File))
	}
	_, err = fmt.Fprintf(out, "restored %s into %s: %d resources\n%s\n", o.File, o.DataDir, len(rep.Resources), refetchNote)
	return err
}

// install copies file beside dst, opens the copy as the daemon would
// (migrating an older schema) and checks it, then renames it over dst.
func install(ctx context.Context, file, dst string, dirMode os.FileMode, sealing metastore.Sealing) error {
	if err := os.MkdirAll(filepath.Dir(dst), dirMode); err != nil {
		return err
	}
	tmp := dst + restoreSuffix
	removeDB(tmp)
	if err := copyFile(file, tmp); err != nil {
		return err
	}
	st, err := metastore.OpenWith(ctx, tmp, metastore.Options{Sealing: sealing})
	if err == nil {
		err = errors.Join(st.IntegrityCheck(ctx), st.Close())
	}
	if err != nil {
		removeDB(tmp)
		return err
	}
	for _, s := range sqliteSideFiles {
		_ = os.Remove(tmp + s) // Close checkpointed the WAL
	}
	removeDB(dst)
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// restoreSealing is the key an encrypted snapshot is checked with: the
// daemon's key file, which a sealed snapshot requires.
func restoreSealing(rep metastore.Report, keyFile, dir string) (metastore.Sealing, error) {
	if keyFile == "" {
		if rep.Sealed {
			return metastore.Sealing{}, errors.New("the snapshot is encrypted: pass --encryption-key-file with the key it was sealed with")
		}
		return metastore.Sealing{}, nil
	}
	return atrest.StateSealing(keyFile, dir)
}

// removeDB removes a database file and its side files, if present.
func removeDB(path string) {
	for _, s := range append([]string{""}, sqliteSideFiles...) {
		_ = os.Remove(path + s)
	}
}

// copyFile copies src to a new file dst (mode 0600) and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Sync(), out.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
