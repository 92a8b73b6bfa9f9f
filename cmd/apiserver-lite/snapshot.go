package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/apiserver-lite/apiserver-lite/pkg/snapshot"
)

func newSnapshotCommand() *cobra.Command {
	return groupCommand("snapshot", "Save a copy of the daemon's store, or seed a data dir from one",
		newSnapshotSaveCommand(), newSnapshotRestoreCommand())
}

func newSnapshotSaveCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{Use: "save FILE [--data-dir D]", Short: "Copy the store to FILE (mode 0600), also while the daemon runs",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return snapshot.Save(cmd.Context(), filepath.Join(dir, dbFile), args[0], cmd.OutOrStdout())
		}}
	cmd.Flags().StringVar(&dir, "data-dir", defaultDataDir, "data directory of the daemon")
	return cmd
}

func newSnapshotRestoreCommand() *cobra.Command {
	o := snapshot.RestoreOptions{DBFile: dbFile, DirMode: dataDirMode}
	cmd := &cobra.Command{Use: "restore FILE --data-dir D [--node-name N] [--encryption-key-file K] [--force]",
		Short: "Seed a stopped daemon's data dir from a snapshot of this node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return snapshot.Restore(cmd.Context(), o, cmd.OutOrStdout())
		}}
	fs := cmd.Flags()
	fs.StringVar(&o.DataDir, "data-dir", defaultDataDir, "data directory to seed (the daemon must be stopped)")
	fs.StringVar(&o.Node, "node-name", hostname(), "the node the data dir is for")
	fs.BoolVar(&o.Force, "force", false, "replace an existing store")
	fs.StringVar(&o.KeyFile, "encryption-key-file", "", "the state key an encrypted snapshot was sealed with")
	return cmd
}
