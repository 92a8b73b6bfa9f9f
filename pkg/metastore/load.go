package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const (
	// loadObjectsSQL casts raw so that it is always read as a blob (see
	// ownedBlob), whatever a damaged or foreign file stored there.
	loadObjectsSQL = `SELECT namespace, name, rv, CAST(raw AS BLOB) FROM objects
WHERE resource = ? ORDER BY namespace, name`
	listResourcesSQL = `SELECT resource FROM sync_state ORDER BY resource`
)

// Load returns every stored object of resource, ordered by namespace and
// name, and its watermark (0 if never synced), read in one transaction.
func (s *Store) Load(ctx context.Context, resource string) ([]Object, uint64, error) {
	if err := s.checkOpen(); err != nil {
		return nil, 0, fmt.Errorf("load %s: %w", resource, err)
	}
	var objs []Object
	var wm uint64
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		if wm, err = scanWatermark(tx.QueryRowContext(ctx, getWatermarkSQL, resource)); err != nil {
			return err
		}
		objs, err = s.loadObjectsTx(ctx, tx, resource)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("load %s: %w", resource, err)
	}
	return objs, wm, nil
}

// LoadSnapshot returns resource's objects, watermark and event log, read
// in one transaction: a local watch cache restored from it serves watches
// from any RV from LogFloor on with exactly the events it missed.
func (s *Store) LoadSnapshot(ctx context.Context, resource string) (Snapshot, error) {
	var objs []Object
	snap, err := s.StreamSnapshot(ctx, resource, 0, func(o []Object) { objs = o })
	if err != nil {
		return Snapshot{}, err
	}
	snap.Objects = objs
	return snap, nil
}

// StreamSnapshot is LoadSnapshot, except that the objects are handed to
// each, in order, in slices of at most chunk objects (0: all at once) as
// they are read, instead of being returned: the caller can decode one
// slice while the next is read. each runs on the caller's goroutine and
// owns the slices it is given. The returned Snapshot has no Objects.
func (s *Store) StreamSnapshot(ctx context.Context, resource string, chunk int, each func([]Object)) (Snapshot, error) {
	if err := s.checkOpen(); err != nil {
		return Snapshot{}, fmt.Errorf("load %s: %w", resource, err)
	}
	var snap Snapshot
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		if snap.Watermark, err = scanWatermark(tx.QueryRowContext(ctx, getWatermarkSQL, resource)); err != nil {
			return err
		}
		if err := s.scanObjectsTx(ctx, tx, resource, chunk, each); err != nil {
			return err
		}
		snap.Events, snap.LogFloor, err = s.loadEventsTx(ctx, tx, resource, snap.Watermark)
		return err
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("load %s: %w", resource, err)
	}
	return snap, nil
}

// loadObjectsTx reads resource's objects in (namespace, name) order.
func (s *Store) loadObjectsTx(ctx context.Context, tx *sql.Tx, resource string) ([]Object, error) {
	var objs []Object
	err := s.scanObjectsTx(ctx, tx, resource, 0, func(o []Object) { objs = o })
	return objs, err
}

// scanObjectsTx reads resource's objects in (namespace, name) order and
// hands them to each in slices of at most chunk objects (0: one slice). A
// row that does not decode is logged and skipped: one damaged row must
// not keep the rest from being served.
func (s *Store) scanObjectsTx(ctx context.Context, tx *sql.Tx, resource string, chunk int, each func([]Object)) error {
	rows, err := tx.QueryContext(ctx, loadObjectsSQL, resource)
	if err != nil {
		return fmt.Errorf("query objects: %w", err)
	}
	defer rows.Close()
	sealed := s.sealsResource(resource)
	var objs []Object
	for rows.Next() {
		var o Object
		var rv int64
		var raw sql.RawBytes
		if err := rows.Scan(&o.Namespace, &o.Name, &rv, &raw); err != nil {
			s.log.Error("skipping undecodable stored object", "resource", resource, "err", err)
			continue
		}
		o.RV = uint64(rv) // the schema CHECKs rv >= 0
		o.Raw = ownedBlob(raw)
		if sealed {
			if o.Raw, err = s.open(o.Raw, objectAD(resource, o.Namespace, o.Name)); err != nil {
				s.log.Error("skipping stored object that does not open", "resource", resource,
					"namespace", o.Namespace, "name", o.Name, "err", err)
				continue
			}
		}
		objs = append(objs, o)
		if len(objs) == chunk {
			each(objs)
			objs = make([]Object, 0, chunk)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read objects: %w", err)
	}
	if len(objs) > 0 {
		each(objs)
	}
	return nil
}

// ownedBlob returns a blob scanned into sql.RawBytes for keeping.
// go-sqlite3 copies every blob it returns into a new Go slice (C.GoBytes)
// that neither it nor database/sql reuses, so the bytes are already the
// caller's; scanning into a *[]byte would copy them once more, which for a
// restore is a second copy of the whole data set on its critical path.
// TestScannedBlobsAreNotReused pins the driver's behaviour. Only a blob
// is handed over this way: database/sql scans any other type into one
// buffer it reuses for the next row, so every query read through here
// selects CAST(column AS BLOB).
func ownedBlob(b sql.RawBytes) []byte { return []byte(b) }

// scanWatermark reads a watermark row; no row means never synced (0).
func scanWatermark(row *sql.Row) (uint64, error) {
	var wm int64
	err := row.Scan(&wm)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read watermark: %w", err)
	}
	return uint64(wm), nil // the schema CHECKs watermark >= 0
}

// Resources lists every resource key that has a sync state.
func (s *Store) Resources(ctx context.Context) ([]string, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	return listResources(ctx, s.reader, func(string) bool { return true })
}

// querier is what both a *sql.DB and a *sql.Tx query with.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// listResources lists the resource keys with a sync state that keep
// says to.
func listResources(ctx context.Context, q querier, keep func(string) bool) ([]string, error) {
	rows, err := q.QueryContext(ctx, listResourcesSQL)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("list resources: %w", err)
		}
		if keep(r) {
			out = append(out, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	return out, nil
}
