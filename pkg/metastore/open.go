package metastore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File permissions. The database holds every synced object, Secrets
// included, so only the daemon's user may read it.
const (
	// dirMode is the mode of a parent directory Open creates.
	dirMode os.FileMode = 0o700
	// fileMode is the mode of the database file and SQLite's side files.
	fileMode os.FileMode = 0o600
)

// sideFileSuffixes name the files SQLite keeps next to the database: the
// write-ahead log, its shared-memory index and the rollback journal.
var sideFileSuffixes = []string{"-wal", "-shm", "-journal"}

// walMode is what PRAGMA journal_mode reports for a WAL database.
const walMode = "wal"

// Open opens (creating if needed) the database file at path with mode 0600,
// in WAL mode, with default Options. It checks the file with PRAGMA
// quick_check (ErrCorrupt) and its schema version (ErrSchemaTooNew), then
// migrates the schema. A damaged or foreign file is left untouched; see
// OpenOrRecover to move it aside instead.
func Open(ctx context.Context, path string) (*Store, error) {
	return openWith(ctx, path, Options{})
}

// OpenWith is Open with opts.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	return openWith(ctx, path, opts)
}

// openWith is Open with opts.
func openWith(ctx context.Context, path string, opts Options) (*Store, error) {
	s, err := open(ctx, path, opts.withDefaults())
	if err != nil {
		return nil, fmt.Errorf("open metastore: %w", err)
	}
	return s, nil
}

// open does the work of Open; on error it releases everything it opened.
func open(ctx context.Context, path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := prepareFiles(abs); err != nil {
		return nil, err
	}
	s := &Store{log: opts.Logger, eventLogSize: opts.EventLogSize, sealing: opts.Sealing}
	s.keys.Store(&keyring{current: opts.Sealing.Sealer})
	if s.writer, err = openPool(writerDSN(abs), writerMaxConns); err != nil {
		return nil, err
	}
	if err := s.init(ctx, abs); err != nil {
		return nil, errors.Join(err, s.release(false))
	}
	return s, nil
}

// init checks the journal mode and the file's integrity, migrates the
// schema, opens the reader pool and prepares the hot-path statements.
func (s *Store) init(ctx context.Context, path string) error {
	if err := checkJournalMode(ctx, s); err != nil {
		return classify(err)
	}
	if err := check(ctx, s.writer, quickCheckSQL); err != nil {
		return fmt.Errorf("quick check: %w", err)
	}
	sealed, err := checkKey(ctx, s.writer, s.sealer())
	if err != nil {
		return fmt.Errorf("check state key: %w", err)
	}
	if err := migrate(ctx, s.writer); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if s.sealer() != nil && !sealed {
		if err := s.sealFirst(ctx); err != nil {
			return fmt.Errorf("seal: %w", err)
		}
	}
	reader, err := openPool(readerDSN(path), readerMaxConns)
	if err != nil {
		return err
	}
	s.reader = reader
	if err := s.reader.PingContext(ctx); err != nil {
		return fmt.Errorf("open reader: %w", err)
	}
	return s.prepareStmts()
}

// checkJournalMode fails unless the writer connection is in WAL mode, which
// some file systems (without shared memory support) refuse.
func checkJournalMode(ctx context.Context, s *Store) error {
	var mode string
	if err := s.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, walMode) {
		return fmt.Errorf("journal mode is %q, want %q", mode, walMode)
	}
	return nil
}

// prepareFiles creates path's parent directory (0700) and the database
// file (0600) before SQLite opens it, and restricts an existing database
// and its side files to 0600.
func prepareFiles(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return fmt.Errorf("create file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create file: %w", err)
	}
	if err := os.Chmod(path, fileMode); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	for _, suffix := range sideFileSuffixes {
		err := os.Chmod(path+suffix, fileMode)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("chmod: %w", err)
		}
	}
	return nil
}
