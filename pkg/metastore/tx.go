package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// inWriteTx runs fn in a transaction on the single writer connection and
// commits if fn returns nil. The writer begins transactions IMMEDIATE, so
// the write lock is taken up front and never upgraded mid-transaction. On
// any error the transaction is rolled back and nothing of it is visible;
// storage failures are marked with ErrWrite or ErrStorageFull.
func (s *Store) inWriteTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return classifyWrite(inTx(ctx, s.writer, fn, true))
}

// classifyWrite marks SQLite's storage errors: SQLITE_FULL as
// ErrStorageFull, SQLITE_IOERR and SQLITE_READONLY as ErrWrite. Other
// errors are returned unchanged.
func classifyWrite(err error) error {
	var se sqlite3.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case sqlite3.ErrFull:
		return fmt.Errorf("%w: %w", ErrStorageFull, err)
	case sqlite3.ErrIoErr, sqlite3.ErrReadonly:
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	return err
}

// inReadTx runs fn in a read transaction on the reader pool. Every query in
// fn sees the same committed snapshot.
func (s *Store) inReadTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return inTx(ctx, s.reader, fn, false)
}

// inTx begins a transaction on db, runs fn, then commits (when commit is set
// and fn succeeded) or rolls back.
func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error, commit bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, rollback(tx))
	}
	if !commit {
		return rollback(tx)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// rollback rolls tx back. A transaction database/sql already ended (for
// example because ctx was cancelled) is not an error.
func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}
