package metastore

import (
	"context"
	"database/sql"
	"fmt"
)

// Reset replaces every stored object of resource with objs and sets its
// watermark, in one transaction. Unlike Apply it accepts a watermark lower
// than the stored one: it is for a cloud restored from a backup, whose
// resourceVersions went backwards. On any error nothing is written.
func (s *Store) Reset(ctx context.Context, resource string, objs []Object, watermark uint64) error {
	if err := s.reset(ctx, resource, objs, watermark); err != nil {
		return fmt.Errorf("reset %s: %w", resource, err)
	}
	return nil
}

func (s *Store) reset(ctx context.Context, resource string, objs []Object, watermark uint64) error {
	wm, err := s.checkBatch(resource, watermark)
	if err != nil {
		return err
	}
	ops := make([]Op, len(objs))
	for i, o := range objs {
		ops[i] = Op{Object: o}
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, dropObjectsSQL, resource); err != nil {
			return fmt.Errorf("delete objects: %w", err)
		}
		// The logged events carry the old history's RVs: the log starts
		// anew at the new watermark.
		if _, err := tx.ExecContext(ctx, clearEventsSQL, resource); err != nil {
			return fmt.Errorf("clear events: %w", err)
		}
		if err := s.applyOpsTx(ctx, tx, resource, ops, false); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, s.stmts.setWatermark).ExecContext(ctx, resource, wm, wm); err != nil {
			return fmt.Errorf("set watermark: %w", err)
		}
		return nil
	})
}
