package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Apply atomically applies ops to resource and sets its watermark, in one
// transaction.
//
// Ops run in order, so a later op on the same object wins. Deleting an
// object that is not stored is not an error. A watermark lower than the
// stored one fails with ErrWatermarkRegression and writes nothing; an equal
// one is accepted. On any error nothing of the batch is written.
func (s *Store) Apply(ctx context.Context, resource string, ops []Op, watermark uint64) error {
	if err := s.apply(ctx, resource, ops, watermark); err != nil {
		return fmt.Errorf("apply %s: %w", resource, err)
	}
	return nil
}

// apply does the work of Apply.
func (s *Store) apply(ctx context.Context, resource string, ops []Op, watermark uint64) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if resource == "" {
		return errors.New("empty resource")
	}
	wm, err := toInt64(watermark)
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		stored, err := scanWatermark(tx.StmtContext(ctx, s.stmts.getWatermark).QueryRowContext(ctx, resource))
		if err != nil {
			return err
		}
		if watermark < stored {
			return fmt.Errorf("%w: got %d, stored %d", ErrWatermarkRegression, watermark, stored)
		}
		if err := s.applyOpsTx(ctx, tx, resource, ops); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, s.stmts.setWatermark).ExecContext(ctx, resource, wm); err != nil {
			return fmt.Errorf("set watermark: %w", err)
		}
		return nil
	})
}

// applyOpsTx runs ops in order inside tx.
func (s *Store) applyOpsTx(ctx context.Context, tx *sql.Tx, resource string, ops []Op) error {
	if len(ops) == 0 {
		return nil
	}
	upsert := tx.StmtContext(ctx, s.stmts.upsertObject)
	del := tx.StmtContext(ctx, s.stmts.deleteObject)
	for i, op := range ops {
		o := op.Object
		if o.Name == "" {
			return fmt.Errorf("op %d: empty object name", i)
		}
		if op.Delete {
			if _, err := del.ExecContext(ctx, resource, o.Namespace, o.Name); err != nil {
				return fmt.Errorf("delete %s/%s: %w", o.Namespace, o.Name, err)
			}
			continue
		}
		rv, err := toInt64(o.RV)
		if err != nil {
			return fmt.Errorf("upsert %s/%s: rv: %w", o.Namespace, o.Name, err)
		}
		if _, err := upsert.ExecContext(ctx, resource, o.Namespace, o.Name, rv, o.Raw); err != nil {
			return fmt.Errorf("upsert %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	return nil
}
