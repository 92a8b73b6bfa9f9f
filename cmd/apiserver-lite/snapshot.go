package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/auth"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/readcache"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/tokencache"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/spf13/cobra"
)

// restoreSuffix names the temporary copy a restore checks before it
// replaces the store.
const restoreSuffix = ".restoring"

// sqliteSideFiles are the files SQLite keeps beside a database.
var sqliteSideFiles = []string{"-wal", "-shm", "-journal"}

func newSnapshotCommand() *cobra.Command {
	return groupCommand("snapshot", "Save a copy of the daemon's store, or seed a data dir from one",
		newSnapshotSaveCommand(), newSnapshotRestoreCommand())
}

func newSnapshotSaveCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{Use: "save FILE [--data-dir D]", Short: "Copy the store to FILE (mode 0600), also while the daemon runs",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return snapshotSave(cmd.Context(), dir, args[0], cmd.OutOrStdout())
		}}
	cmd.Flags().StringVar(&dir, "data-dir", defaultDataDir, "data directory of the daemon")
	return cmd
}

func newSnapshotRestoreCommand() *cobra.Command {
	var o restoreOptions
	cmd := &cobra.Command{Use: "restore FILE --data-dir D [--node-name N] [--encryption-key-file K] [--force]",
		Short: "Seed a stopped daemon's data dir from a snapshot of this node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return snapshotRestore(cmd.Context(), o, cmd.OutOrStdout())
		}}
	fs := cmd.Flags()
	fs.StringVar(&o.dir, "data-dir", defaultDataDir, "data directory to seed (the daemon must be stopped)")
	fs.StringVar(&o.node, "node-name", hostname(), "the node the data dir is for")
	fs.BoolVar(&o.force, "force", false, "replace an existing store")
	fs.StringVar(&o.keyFile, "encryption-key-file", "", "the state key an encrypted snapshot was sealed with")
	return cmd
}

// snapshotSave copies the store with VACUUM INTO from a read-only
// connection: consistent while the daemon runs, and only for a user who
// may read the data dir (the copy holds every synced Secret).
func snapshotSave(ctx context.Context, dir, file string, out io.Writer) error {
	if err := metastore.Backup(ctx, filepath.Join(dir, dbFile), file, snapshotLeavesOut...); err != nil {
		return err
	}
	rep, err := metastore.Inspect(ctx, file, nodeNameKey)
	if err != nil {
		return err
	}
	sealed := "Secrets in plaintext"
	if rep.Sealed {
		sealed = "Secrets encrypted with the state key"
	}
	_, err = fmt.Fprintf(out, "snapshot %s: node %q, %d resources, integrity %s, %s, no credentials\n",
		file, rep.Meta[nodeNameKey], len(rep.Resources), rep.Integrity, sealed)
	return err
}

// restoreOptions are the arguments of `snapshot restore`.
type restoreOptions struct {
	file, dir, node, keyFile string
	force                    bool
}

// snapshotLeavesOut are the meta prefixes a snapshot leaves out: every
// credential the node holds (its stored TokenRequest answers, the TLS
// door's reviewed tokens and authorization decisions) and the answers of
// get-only kinds. The TLS door's key lives outside the database.
var snapshotLeavesOut = []string{tokencache.Prefix, auth.TokenKeyPrefix, auth.DecisionKeyPrefix, readcache.Prefix}

// refetchNote says what a node seeded from a snapshot fetches again.
const refetchNote = `not in the snapshot, fetched again from the cloud once it is reachable: projected service-account tokens
(pods with projected tokens start only after the kubelet's next TokenRequest reaches the cloud), the TLS door's
token reviews and authorization decisions, answers of get-only kinds; the TLS door generates its own serving key`

// snapshotRestore seeds a data dir from a snapshot, refusing a damaged
// snapshot, another node's snapshot and, without --force, an existing
// store.
func snapshotRestore(ctx context.Context, o restoreOptions, out io.Writer) error {
	rep, err := metastore.Inspect(ctx, o.file, nodeNameKey)
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	if rep.Integrity != "ok" {
		return fmt.Errorf("snapshot restore: %s is damaged: %s", o.file, rep.Integrity)
	}
	if from := string(rep.Meta[nodeNameKey]); from != "" && from != o.node {
		return fmt.Errorf("snapshot restore: %s was taken on node %q and holds only what that node may read; refusing to seed node %q", o.file, from, o.node)
	}
	dst := filepath.Join(o.dir, dbFile)
	if _, err := os.Stat(dst); err == nil && !o.force {
		return fmt.Errorf("snapshot restore: %s already exists; stop the daemon and pass --force to replace it", dst)
	}
	sealing, err := restoreSealing(rep, o.keyFile, o.dir)
	if err != nil {
		return fmt.Errorf("snapshot restore: %w", err)
	}
	if err := installSnapshot(ctx, o.file, dst, sealing); err != nil {
		return fmt.Errorf("snapshot restore: %w", openStoreError(err, config{EncryptionKeyFile: o.keyFile, DataDir: o.file}))
	}
	_, err = fmt.Fprintf(out, "restored %s into %s: %d resources\n%s\n", o.file, o.dir, len(rep.Resources), refetchNote)
	return err
}

// installSnapshot copies file beside dst, opens the copy as the daemon
// would (migrating an older schema) and checks it, then renames it over
// dst.
func installSnapshot(ctx context.Context, file, dst string, sealing metastore.Sealing) error {
	if err := os.MkdirAll(filepath.Dir(dst), dataDirMode); err != nil {
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
	return stateSealing(config{EncryptionKeyFile: keyFile, DataDir: dir})
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
