package metastore

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
)

// Store is the SQLite-backed persistent state. Safe for concurrent use.
type Store struct {
	// writer holds exactly one connection. SQLite admits one writer at a
	// time; funnelling every write through one connection queues writers in
	// database/sql instead of failing them with SQLITE_BUSY. Set by Open,
	// never reassigned.
	writer *sql.DB
	// reader is a pool of query_only connections. WAL lets each read a
	// committed snapshot while writer commits. Set by Open, never reassigned.
	reader *sql.DB
	// stmts are the hot-path statements, prepared on writer by Open and
	// closed by Close.
	stmts stmts
	// closed flips to true exactly once, in Close; every method checks it
	// before touching the pools.
	closed atomic.Bool
	// log receives lines about skipped rows. Immutable.
	log *slog.Logger
	// eventLogSize is how many events the log keeps per resource, > 0.
	// Immutable.
	eventLogSize int
	// sealing says which values are sealed. Immutable.
	sealing Sealing
	// keys holds the state key; set by Open, replaced by Rekey.
	keys atomic.Pointer[keyring]
	// rekeyMu serializes Rekey.
	rekeyMu sync.Mutex
}

// stmts are the statements Apply runs for every batch.
type stmts struct {
	upsertObject *sql.Stmt // args: resource, namespace, name, rv, raw
	deleteObject *sql.Stmt // args: resource, namespace, name
	getWatermark *sql.Stmt // args: resource; row: watermark
	setWatermark *sql.Stmt // args: resource, watermark, log floor
	getPrev      *sql.Stmt // args: resource, namespace, name; row: raw
	insertEvent  *sql.Stmt // args: resource, type, rv, namespace, name, raw, prev
}

const (
	upsertObjectSQL = `INSERT INTO objects (resource, namespace, name, rv, raw)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (resource, namespace, name) DO UPDATE SET rv = excluded.rv, raw = excluded.raw`
	deleteObjectSQL = `DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?`
	getWatermarkSQL = `SELECT watermark FROM sync_state WHERE resource = ?`
	setWatermarkSQL = `INSERT INTO sync_state (resource, watermark, log_floor) VALUES (?, ?, ?)
ON CONFLICT (resource) DO UPDATE SET watermark = excluded.watermark, log_floor = excluded.log_floor`
)

// errOutOfRange reports a resourceVersion or watermark that does not fit
// SQLite's signed 64-bit INTEGER. etcd revisions are int64, so a cloud never
// sends one.
var errOutOfRange = errors.New("value exceeds int64 range")

// toInt64 converts an RV or watermark to the type SQLite stores.
func toInt64(v uint64) (int64, error) {
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %d", errOutOfRange, v)
	}
	return int64(v), nil
}

// checkOpen returns ErrClosed once Close has been called.
func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// prepareStmts prepares the hot-path statements on the writer pool.
func (s *Store) prepareStmts() error {
	targets := []struct {
		dst   **sql.Stmt
		query string
	}{
		{&s.stmts.upsertObject, upsertObjectSQL},
		{&s.stmts.deleteObject, deleteObjectSQL},
		{&s.stmts.getWatermark, getWatermarkSQL},
		{&s.stmts.setWatermark, setWatermarkSQL},
		{&s.stmts.getPrev, getPrevSQL},
		{&s.stmts.insertEvent, insertEventSQL},
	}
	for _, t := range targets {
		st, err := s.writer.Prepare(t.query)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		*t.dst = st
	}
	return nil
}

// closeStmts closes every prepared statement; nil ones are skipped.
func (s *Store) closeStmts() error {
	var errs []error
	all := []*sql.Stmt{s.stmts.upsertObject, s.stmts.deleteObject, s.stmts.getWatermark,
		s.stmts.setWatermark, s.stmts.getPrev, s.stmts.insertEvent}
	for _, st := range all {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
