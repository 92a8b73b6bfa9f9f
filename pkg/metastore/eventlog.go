package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const (
	getPrevSQL     = `SELECT raw FROM objects WHERE resource = ? AND namespace = ? AND name = ?`
	insertEventSQL = `INSERT INTO events (resource, type, rv, namespace, name, raw, prev)
VALUES (?, ?, ?, ?, ?, ?, ?)`
	clearEventsSQL = `DELETE FROM events WHERE resource = ?`
	// trimCutoffSQL finds the newest event beyond the size limit (the
	// OFFSET): it and every older one are trimmed.
	trimCutoffSQL = `SELECT id FROM events WHERE resource = ? ORDER BY id DESC LIMIT 1 OFFSET ?`
	trimmedRVSQL  = `SELECT max(rv) FROM events WHERE resource = ? AND id <= ?`
	trimSQL       = `DELETE FROM events WHERE resource = ? AND id <= ?`
	getFloorSQL   = `SELECT log_floor FROM sync_state WHERE resource = ?`
	// loadEventsSQL reads raw and prev as blobs: see ownedBlob.
	loadEventsSQL = `SELECT type, rv, namespace, name, CAST(raw AS BLOB), CAST(prev AS BLOB) FROM events
WHERE resource = ? ORDER BY id`
)

// loggable reports whether ops, committed at watermark wm, continue the
// event log of a resource at watermark stored: each is a whole event (an
// object with its RV and encoding) after stored and up to wm, in RV
// order. Otherwise, as on a first sync or a
// relist whose changes predate the watermark, the log restarts at the
// new watermark, as the cache then restarts its ring.
func loggable(ops []Op, stored, wm uint64) bool {
	if stored == 0 {
		return false
	}
	last := stored + 1
	for _, op := range ops {
		if op.Object.RV < last || op.Object.RV > wm || len(op.Object.Raw) == 0 {
			return false
		}
		last = op.Object.RV
	}
	return true
}

// logEventTx appends the event op makes, given the object's state before
// it (nil if none), to resource's log.
// Both encodings are sealed with sl unless nil.
func (s *Store) logEventTx(ctx context.Context, tx *sql.Tx, resource string, op Op, prev []byte, found bool, sl Sealer) error {
	typ := Added
	switch {
	case op.Delete:
		typ = Deleted
	case found:
		typ = Modified
	}
	o := op.Object
	rv, err := toInt64(o.RV)
	if err != nil {
		return err
	}
	raw, err := seal(sl, o.Raw, eventAD(resource, o.Namespace, o.Name, rv, "raw"))
	if err != nil {
		return err
	}
	if prev, err = seal(sl, prev, eventAD(resource, o.Namespace, o.Name, rv, "prev")); err != nil {
		return err
	}
	_, err = tx.StmtContext(ctx, s.stmts.insertEvent).ExecContext(ctx, resource, string(typ), rv, o.Namespace, o.Name, raw, prev)
	return err
}

// prevTx returns the stored encoding of an object and whether it exists.
func (s *Store) prevTx(ctx context.Context, tx *sql.Tx, resource string, o *Object) ([]byte, bool, error) {
	var raw []byte
	err := tx.StmtContext(ctx, s.stmts.getPrev).QueryRowContext(ctx, resource, o.Namespace, o.Name).Scan(&raw)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	if s.sealsResource(resource) {
		if raw, err = s.open(raw, objectAD(resource, o.Namespace, o.Name)); err != nil {
			return nil, false, err
		}
	}
	return raw, true, nil
}

// trimTx keeps the newest eventLogSize events of resource and returns the
// new floor: floor, raised to the RV of the newest trimmed event.
func (s *Store) trimTx(ctx context.Context, tx *sql.Tx, resource string, floor uint64) (uint64, error) {
	var cutoff int64
	err := tx.QueryRowContext(ctx, trimCutoffSQL, resource, s.eventLogSize).Scan(&cutoff)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return floor, nil // within the limit
	case err != nil:
		return 0, fmt.Errorf("trim events: %w", err)
	}
	var trimmed int64
	if err := tx.QueryRowContext(ctx, trimmedRVSQL, resource, cutoff).Scan(&trimmed); err != nil {
		return 0, fmt.Errorf("trim events: %w", err)
	}
	if _, err := tx.ExecContext(ctx, trimSQL, resource, cutoff); err != nil {
		return 0, fmt.Errorf("trim events: %w", err)
	}
	return max(floor, uint64(trimmed)), nil // the schema CHECKs rv >= 0
}

// loadEventsTx reads resource's log floor and events, oldest first. A row
// that does not decode is logged, and the events up to it are dropped
// with the floor raised past it, so the rest still form a gapless log.
// Both encodings of each event are kept without a second copy (see
// ownedBlob): they are the restored log's bytes.
func (s *Store) loadEventsTx(ctx context.Context, tx *sql.Tx, resource string, wm uint64) ([]Event, uint64, error) {
	var floor int64
	err := tx.QueryRowContext(ctx, getFloorSQL, resource).Scan(&floor)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read log floor: %w", err)
	}
	rows, err := tx.QueryContext(ctx, loadEventsSQL, resource)
	if err != nil {
		return nil, 0, fmt.Errorf("query events: %w", err)
	}
	defer rows.Close()
	var events []Event
	// skipped is set after a row that did not decode: its RV is unknown,
	// so the floor moves to the next readable event's RV.
	skipped := false
	for rows.Next() {
		var e Event
		var rv int64
		var raw, prev sql.RawBytes
		if err := rows.Scan(&e.Type, &rv, &e.Object.Namespace, &e.Object.Name, &raw, &prev); err != nil {
			s.log.Error("skipping undecodable logged event and the events before it", "resource", resource, "err", err)
			events, skipped = nil, true
			continue
		}
		e.Object.RV = uint64(rv) // the schema CHECKs rv >= 0
		e.Object.Raw, e.Prev = ownedBlob(raw), ownedBlob(prev)
		if err := s.openEvent(resource, &e, rv); err != nil {
			s.log.Error("skipping undecodable logged event and the events before it", "resource", resource, "err", err)
			events, skipped = nil, true
			continue
		}
		if skipped {
			floor, skipped = rv, false
		}
		if e.Object.RV > uint64(floor) {
			events = append(events, e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read events: %w", err)
	}
	if skipped {
		return nil, wm, nil
	}
	return events, min(uint64(floor), wm), nil
}

// openEvent unseals a logged event's encodings when resource is sealed.
func (s *Store) openEvent(resource string, e *Event, rv int64) error {
	if !s.sealsResource(resource) {
		return nil
	}
	o := &e.Object
	var err error
	if o.Raw, err = s.open(o.Raw, eventAD(resource, o.Namespace, o.Name, rv, "raw")); err != nil {
		return fmt.Errorf("open %s/%s: %w", o.Namespace, o.Name, err)
	}
	if e.Prev, err = s.open(e.Prev, eventAD(resource, o.Namespace, o.Name, rv, "prev")); err != nil {
		return fmt.Errorf("open previous %s/%s: %w", o.Namespace, o.Name, err)
	}
	return nil
}
