package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Apply atomically applies ops to resource and sets its watermark, in one
// transaction, and appends the events the ops make to the resource's event
// log (see LoadSnapshot), trimmed to the newest Options.EventLogSize.
//
// Each op is logged as one event: an upsert of an object not stored as
// ADDED, else MODIFIED, a delete as DELETED carrying the op's Object (its
// last state with the delete's RV). The log continues only while every op
// carries its encoding and an RV above the stored watermark, up to
// watermark, in order: the events a local watch cache publishes. Any other
// batch (a first sync, a relist replacing the state) restarts the log at
// watermark, as the cache then restarts its ring.
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

// checkBatch checks that the store is open and a batch names a resource,
// and returns watermark as SQLite stores it.
func (s *Store) checkBatch(resource string, watermark uint64) (int64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if resource == "" {
		return 0, errors.New("empty resource")
	}
	wm, err := toInt64(watermark)
	if err != nil {
		return 0, fmt.Errorf("watermark: %w", err)
	}
	return wm, nil
}

// apply does the work of Apply.
func (s *Store) apply(ctx context.Context, resource string, ops []Op, watermark uint64) error {
	wm, err := s.checkBatch(resource, watermark)
	if err != nil {
		return err
	}
	return s.inWriteTx(ctx, func(tx *sql.Tx) error {
		stored, err := scanWatermark(tx.StmtContext(ctx, s.stmts.getWatermark).QueryRowContext(ctx, resource))
		if err != nil {
			return err
		}
		if watermark < stored {
			return fmt.Errorf("%w: got %d, stored %d", ErrWatermarkRegression, watermark, stored)
		}
		logged := loggable(ops, stored, watermark)
		floor, err := s.startLogTx(ctx, tx, resource, logged, watermark)
		if err != nil {
			return err
		}
		if err := s.applyOpsTx(ctx, tx, resource, ops, logged); err != nil {
			return err
		}
		if logged {
			if floor, err = s.trimTx(ctx, tx, resource, floor); err != nil {
				return err
			}
		}
		if _, err := tx.StmtContext(ctx, s.stmts.setWatermark).ExecContext(ctx, resource, wm, int64(floor)); err != nil {
			return fmt.Errorf("set watermark: %w", err)
		}
		return nil
	})
}

// startLogTx returns the log floor a batch starts from: the stored one if
// the batch continues the log, else watermark, after emptying the log.
func (s *Store) startLogTx(ctx context.Context, tx *sql.Tx, resource string, logged bool, watermark uint64) (uint64, error) {
	if !logged {
		if _, err := tx.ExecContext(ctx, clearEventsSQL, resource); err != nil {
			return 0, fmt.Errorf("clear events: %w", err)
		}
		return watermark, nil
	}
	var floor int64
	if err := tx.QueryRowContext(ctx, getFloorSQL, resource).Scan(&floor); err != nil {
		return 0, fmt.Errorf("read log floor: %w", err)
	}
	return uint64(floor), nil // the schema CHECKs log_floor >= 0
}

// applyOpsTx runs ops in order inside tx, logging each when logged is set.
func (s *Store) applyOpsTx(ctx context.Context, tx *sql.Tx, resource string, ops []Op, logged bool) error {
	sl := s.resourceSealer(resource)
	for i, op := range ops {
		o := op.Object
		if o.Name == "" {
			return fmt.Errorf("op %d: empty object name", i)
		}
		var prev []byte
		var found bool
		if logged {
			var err error
			if prev, found, err = s.prevTx(ctx, tx, resource, &o); err != nil {
				return fmt.Errorf("read %s/%s: %w", o.Namespace, o.Name, err)
			}
		}
		if err := s.applyOpTx(ctx, tx, resource, op, sl); err != nil {
			return err
		}
		if logged {
			if err := s.logEventTx(ctx, tx, resource, op, prev, found, sl); err != nil {
				return fmt.Errorf("log %s/%s: %w", o.Namespace, o.Name, err)
			}
		}
	}
	return nil
}

// applyOpTx runs one op inside tx, sealing the object with sl unless nil.
func (s *Store) applyOpTx(ctx context.Context, tx *sql.Tx, resource string, op Op, sl Sealer) error {
	o := op.Object
	if op.Delete {
		if _, err := tx.StmtContext(ctx, s.stmts.deleteObject).ExecContext(ctx, resource, o.Namespace, o.Name); err != nil {
			return fmt.Errorf("delete %s/%s: %w", o.Namespace, o.Name, err)
		}
		return nil
	}
	rv, err := toInt64(o.RV)
	if err != nil {
		return fmt.Errorf("upsert %s/%s: rv: %w", o.Namespace, o.Name, err)
	}
	raw, err := seal(sl, o.Raw, objectAD(resource, o.Namespace, o.Name))
	if err != nil {
		return fmt.Errorf("seal %s/%s: %w", o.Namespace, o.Name, err)
	}
	if _, err := tx.StmtContext(ctx, s.stmts.upsertObject).ExecContext(ctx, resource, o.Namespace, o.Name, rv, raw); err != nil {
		return fmt.Errorf("upsert %s/%s: %w", o.Namespace, o.Name, err)
	}
	return nil
}
