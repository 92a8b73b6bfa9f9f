package metastore

import (
	"context"
	"errors"
	"fmt"
)

// checkpointSQL copies the whole WAL into the database file and truncates
// the WAL, leaving a self-contained file behind.
const checkpointSQL = "PRAGMA wal_checkpoint(TRUNCATE)"

// Close checkpoints the WAL and closes the database.
//
// Call it once, after every other use of the Store has returned. A second
// Close returns ErrClosed. A failed checkpoint loses nothing: every
// committed batch is already durable in the WAL.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	if err := s.release(true); err != nil {
		return fmt.Errorf("close metastore: %w", err)
	}
	return nil
}

// release closes the statements and the reader pool, checkpoints if asked,
// and closes the writer. It tolerates a partly opened Store.
func (s *Store) release(checkpoint bool) error {
	errs := []error{s.closeStmts()}
	if s.reader != nil {
		errs = append(errs, s.reader.Close())
	}
	if s.writer == nil {
		return errors.Join(errs...)
	}
	// Readers are closed, so none pins an old snapshot of the WAL.
	if checkpoint {
		if _, err := s.writer.ExecContext(context.Background(), checkpointSQL); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint: %w", err))
		}
	}
	errs = append(errs, s.writer.Close())
	return errors.Join(errs...)
}
