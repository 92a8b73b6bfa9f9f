package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/spf13/pflag"
)

// cmdRekey re-encrypts the stopped daemon's state with a new key in one
// transaction: until it commits the old key opens everything, after it
// only the new one does. The daemon must be stopped, since it would go on
// sealing with the old key.
func cmdRekey(ctx context.Context, args []string, out io.Writer) error {
	fs := pflag.NewFlagSet("rekey", pflag.ContinueOnError)
	dir := fs.String("data-dir", defaultDataDir, "data directory of the stopped daemon")
	oldFile := fs.String("encryption-key-file", "", "the key the state is sealed with now; empty if it was never sealed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: apiserver-lite rekey NEW-KEY-FILE --encryption-key-file OLD-KEY-FILE [--data-dir D]")
	}
	newFile, db := fs.Arg(0), filepath.Join(*dir, dbFile)
	cur, next, err := atrest.Rekey(ctx, db, *dir, *oldFile, newFile)
	if err != nil {
		return fmt.Errorf("rekey: %w", err)
	}
	if err := door.ResealGeneratedKey(*dir, cur.Sealer, next.Sealer); err != nil {
		return fmt.Errorf("rekey: the state is re-encrypted, but not the TLS door's generated key (a new certificate and CA will be generated): %w", err)
	}
	if err := door.ResealBootstrapPair(*dir, cur.Sealer, next.Sealer); err != nil {
		return fmt.Errorf("rekey: the state is re-encrypted, but not the pods' door's bootstrapped certificate (a new CSR will be sent): %w", err)
	}
	_, err = fmt.Fprintf(out, "re-encrypted %s with %s; start the daemon with --encryption-key-file %s, then destroy the old key\n", db, newFile, newFile)
	return err
}
