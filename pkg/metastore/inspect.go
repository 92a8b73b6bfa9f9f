package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Report describes a database file, read without changing it.
type Report struct {
	SchemaVersion int
	// Integrity is "ok", or PRAGMA integrity_check's findings.
	Integrity string
	Resources []ResourceReport // ordered by key
	// Meta holds the values of the meta keys Inspect was asked for that
	// are present.
	Meta map[string][]byte
	// Sealed is set when values in the file are sealed with a state key.
	Sealed bool
}

// ResourceReport is one resource's stored state.
type ResourceReport struct {
	Key       string
	Watermark uint64
	Objects   int
}

const (
	inspectResourcesSQL = `SELECT s.resource, s.watermark,
	(SELECT count(*) FROM objects o WHERE o.resource = s.resource)
FROM sync_state s ORDER BY s.resource`
	// vacuumIntoSQL writes a consistent, compacted copy of the database
	// to a new file, in one read transaction.
	vacuumIntoSQL = `VACUUM INTO ?`
)

// openReadOnly opens path read-only (mode=ro: SQLite refuses any change to
// it). It never creates the file, migrates or checkpoints; a running
// daemon's WAL is read as a committed snapshot. Not query_only, which
// would also forbid VACUUM INTO another file.
func openReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	p := commonParams()
	p.Set("mode", "ro")
	return openPool(fileDSN(path, p), writerMaxConns)
}

// Inspect reads path's schema version, integrity, per-resource watermark
// and object count, and the values of metaKeys, without writing to it.
func Inspect(ctx context.Context, path string, metaKeys ...string) (Report, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return Report{}, fmt.Errorf("inspect: %w", err)
	}
	defer db.Close()
	r := Report{Meta: map[string][]byte{}}
	err = inTx(ctx, db, func(tx *sql.Tx) error {
		if r.SchemaVersion, err = schemaVersionTx(ctx, tx); err != nil {
			return err
		}
		if r.Resources, err = resourceReportsTx(ctx, tx); err != nil {
			return err
		}
		if r.SchemaVersion > 0 {
			metaKeys = append(metaKeys, keyCheckKey)
		}
		for _, k := range metaKeys {
			var v []byte
			switch err := tx.QueryRowContext(ctx, getMetaSQL, k).Scan(&v); {
			case err == nil:
				r.Meta[k] = v
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("read meta %s: %w", k, err)
			}
		}
		_, r.Sealed = r.Meta[keyCheckKey]
		delete(r.Meta, keyCheckKey)
		return nil
	}, false)
	if err != nil {
		return Report{}, fmt.Errorf("inspect: %w", classify(err))
	}
	found, err := findings(ctx, db, integrityCheckSQL)
	if err != nil {
		return Report{}, fmt.Errorf("inspect: %w", classify(err))
	}
	r.Integrity = strings.Join(found, "; ")
	return r, nil
}

func resourceReportsTx(ctx context.Context, tx *sql.Tx) ([]ResourceReport, error) {
	rows, err := tx.QueryContext(ctx, inspectResourcesSQL)
	if err != nil {
		return nil, fmt.Errorf("read resources: %w", err)
	}
	defer rows.Close()
	var out []ResourceReport
	for rows.Next() {
		var rr ResourceReport
		var wm int64
		if err := rows.Scan(&rr.Key, &wm, &rr.Objects); err != nil {
			return nil, fmt.Errorf("read resources: %w", err)
		}
		rr.Watermark = uint64(wm) // the schema CHECKs watermark >= 0
		out = append(out, rr)
	}
	return out, rows.Err()
}

// Backup writes a consistent copy of the database at src to dst, a file
// that must not exist, with mode 0600. It opens src read-only, so it works
// beside a running daemon (WAL readers do not block the writer) or on a
// stopped one's data dir. The meta values under leaveOut prefixes are
// removed from the copy, their bytes overwritten, before it returns.
func Backup(ctx context.Context, src, dst string, leaveOut ...string) error {
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("snapshot: %s already exists", dst)
	}
	db, err := openReadOnly(src)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer db.Close()
	// VACUUM INTO creates dst with the process umask; create it first, so
	// it is never readable by others, and let SQLite fill the empty file.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if _, err := db.ExecContext(ctx, vacuumIntoSQL, dst); err != nil {
		_ = os.Remove(dst)
		return fmt.Errorf("snapshot: %w", classify(err))
	}
	if err := leaveOutMeta(ctx, dst, leaveOut); err != nil {
		_ = os.Remove(dst)
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// leaveOutMeta deletes the meta values under prefixes from the copy at
// path and rebuilds it, so no page of the file keeps their bytes. The
// rollback journal stays in memory: a journal file would hold the deleted
// pages.
func leaveOutMeta(ctx context.Context, path string, prefixes []string) error {
	if len(prefixes) == 0 {
		return nil
	}
	p := commonParams()
	p.Set("_journal_mode", "MEMORY")
	p.Set("_secure_delete", secureDelete)
	db, err := openPool(fileDSN(path, p), writerMaxConns)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, prefix := range prefixes {
		if prefix == "" {
			return errors.New("leave out: empty prefix")
		}
		if _, err := db.ExecContext(ctx, deleteMetaPrefixSQL, len(prefix), prefix); err != nil {
			return fmt.Errorf("leave out %s*: %w", prefix, err)
		}
	}
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return db.Close()
}
