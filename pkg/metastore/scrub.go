package metastore

import (
	"context"
	"errors"
	"fmt"
)

// ErrBusy is returned by Scrub when a reader kept the checkpoint from
// completing; a later Scrub may succeed.
var ErrBusy = errors.New("checkpoint blocked by a reader")

// scrubSQL copies every committed page into the database file and
// truncates the write-ahead log to zero bytes. The writer connection runs
// with secure_delete on, so the copied pages hold zeros where deleted rows
// were; after a complete checkpoint no earlier page image (and no deleted
// row) remains in any file.
const scrubSQL = `PRAGMA wal_checkpoint(TRUNCATE)`

// Scrub removes deleted rows' bytes from disk: it checkpoints and
// truncates the WAL. It returns ErrBusy if a concurrent reader prevented a
// complete checkpoint.
func (s *Store) Scrub(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("scrub: %w", err)
	}
	var busy, logFrames, checkpointed int
	if err := s.writer.QueryRowContext(ctx, scrubSQL).Scan(&busy, &logFrames, &checkpointed); err != nil {
		return fmt.Errorf("scrub: %w", err)
	}
	if busy != 0 {
		return fmt.Errorf("scrub: %w", ErrBusy)
	}
	return nil
}
