package metastore

import (
	"context"
	"database/sql"
	"fmt"
)

const (
	dropObjectsSQL   = `DELETE FROM objects WHERE resource = ?`
	dropSyncStateSQL = `DELETE FROM sync_state WHERE resource = ?`
)

// Drop removes a resource's objects, event log and sync state in one
// transaction.
// Afterwards the resource reads as never synced (watermark 0), so it is the
// only way a watermark goes back.
func (s *Store) Drop(ctx context.Context, resource string) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("drop %s: %w", resource, err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, dropObjectsSQL, resource); err != nil {
			return fmt.Errorf("delete objects: %w", err)
		}
		if _, err := tx.ExecContext(ctx, clearEventsSQL, resource); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
		if _, err := tx.ExecContext(ctx, dropSyncStateSQL, resource); err != nil {
			return fmt.Errorf("delete sync state: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("drop %s: %w", resource, err)
	}
	return nil
}
