//go:build e2e

package framework

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	// The SQLite driver apiserver-lite itself uses.
	_ "github.com/mattn/go-sqlite3"
)

// Where apiserver-lite keeps its state: edgeArgs passes Dir/edgeDataDir as
// --data-dir, and the daemon names its database edgeDBFile inside it.
const (
	edgeDataDir = "edge-data"
	edgeDBFile  = "state.db"
)

// StoredObject is one object row of apiserver-lite's SQLite state.
type StoredObject struct {
	Namespace, Name string
	RV              uint64
	Raw             []byte
}

// EdgeStore is what apiserver-lite persisted for one resource, read
// straight from its SQLite file.
type EdgeStore struct {
	// Watermark is the stored watermark; HasWatermark is false if the
	// resource was never synced.
	Watermark    uint64
	HasWatermark bool
	// Objects are the stored objects in namespace/name order.
	Objects []StoredObject
	// Integrity is the first line of PRAGMA integrity_check ("ok").
	Integrity string
}

// EdgeDBPath is apiserver-lite's SQLite database file.
func (c *Cluster) EdgeDBPath() string {
	return filepath.Join(c.Dir, edgeDataDir, edgeDBFile)
}

// ReadEdgeStore opens apiserver-lite's database read-only, which is only
// meaningful while the daemon is not running (after KillEdge), and reads
// the watermark and objects stored under resourceKey (cloudsync's
// Resource.Key, e.g. "/v1/configmaps") in one read transaction.
func (c *Cluster) ReadEdgeStore(ctx context.Context, resourceKey string) (EdgeStore, error) {
	dsn := (&url.URL{Scheme: "file", OmitHost: true, Path: c.EdgeDBPath(), RawQuery: "mode=ro"}).String()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return EdgeStore{}, fmt.Errorf("open edge store: %w", err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return EdgeStore{}, fmt.Errorf("begin read of edge store: %w", err)
	}
	defer tx.Rollback()
	var s EdgeStore
	if err := tx.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&s.Integrity); err != nil {
		return EdgeStore{}, fmt.Errorf("integrity check: %w", err)
	}
	err = tx.QueryRowContext(ctx, `SELECT watermark FROM sync_state WHERE resource = ?`, resourceKey).Scan(&s.Watermark)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return EdgeStore{}, fmt.Errorf("read watermark: %w", err)
	default:
		s.HasWatermark = true
	}
	if s.Objects, err = storedObjects(ctx, tx, resourceKey); err != nil {
		return EdgeStore{}, err
	}
	return s, nil
}

// storedObjects reads the object rows of resourceKey.
func storedObjects(ctx context.Context, tx *sql.Tx, resourceKey string) ([]StoredObject, error) {
	rows, err := tx.QueryContext(ctx,
		`SELECT namespace, name, rv, raw FROM objects WHERE resource = ? ORDER BY namespace, name`, resourceKey)
	if err != nil {
		return nil, fmt.Errorf("read objects: %w", err)
	}
	defer rows.Close()
	var out []StoredObject
	for rows.Next() {
		var o StoredObject
		if err := rows.Scan(&o.Namespace, &o.Name, &o.RV, &o.Raw); err != nil {
			return nil, fmt.Errorf("read objects: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read objects: %w", err)
	}
	return out, nil
}
