package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// migrations lists the schema changes in order: migrations[i] moves the
// schema from version i to version i+1, so len(migrations) is the version
// this code writes. Append only; never edit or reorder a released entry.
var migrations = []string{
	// 1: objects, one watermark per resource, opaque metadata.
	`CREATE TABLE objects (
	resource  TEXT    NOT NULL,
	namespace TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	rv        INTEGER NOT NULL CHECK (rv >= 0),
	raw       BLOB,
	PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;
CREATE TABLE sync_state (
	resource  TEXT PRIMARY KEY,
	watermark INTEGER NOT NULL CHECK (watermark >= 0)
);
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value BLOB
);`,
	// 2: the event log. log_floor is the RV above which a resource's log
	// holds every event up to its watermark; a database from version 1
	// has no log, so its floor is its watermark.
	`ALTER TABLE sync_state ADD COLUMN log_floor INTEGER NOT NULL DEFAULT 0 CHECK (log_floor >= 0);
UPDATE sync_state SET log_floor = watermark;
CREATE TABLE events (
	id        INTEGER PRIMARY KEY,
	resource  TEXT    NOT NULL,
	type      TEXT    NOT NULL CHECK (type IN ('ADDED', 'MODIFIED', 'DELETED')),
	rv        INTEGER NOT NULL CHECK (rv >= 0),
	namespace TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	raw       BLOB,
	prev      BLOB
);
CREATE INDEX events_by_resource ON events (resource, id);`,
}

// schemaVersionRow is the id of the single row of schema_version.
const schemaVersionRow = 1

const (
	createSchemaVersionSQL = `CREATE TABLE IF NOT EXISTS schema_version (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
)`
	getSchemaVersionSQL = `SELECT version FROM schema_version WHERE id = ?`
	setSchemaVersionSQL = `INSERT INTO schema_version (id, version) VALUES (?, ?)
ON CONFLICT (id) DO UPDATE SET version = excluded.version`
)

// migrate brings the schema to len(migrations) in one transaction, or
// returns ErrSchemaTooNew, touching nothing, if the database is newer.
func migrate(ctx context.Context, db *sql.DB) error {
	return inTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, createSchemaVersionSQL); err != nil {
			return fmt.Errorf("create schema_version: %w", err)
		}
		have, err := schemaVersionTx(ctx, tx)
		if err != nil {
			return err
		}
		want := len(migrations)
		if have > want {
			return fmt.Errorf("%w: database has schema version %d, this build knows %d: it was written by a "+
				"newer apiserver-lite; run that build, or roll back with the snapshot taken before the upgrade "+
				"(apiserver-lite snapshot restore)", ErrSchemaTooNew, have, want)
		}
		if have == want {
			return nil
		}
		for v := have; v < want; v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("to version %d: %w", v+1, foreignSchema(err))
			}
		}
		if _, err := tx.ExecContext(ctx, setSchemaVersionSQL, schemaVersionRow, want); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		return nil
	}, true)
}

// schemaVersionTx reads the schema version; 0 for a new database.
func schemaVersionTx(ctx context.Context, tx *sql.Tx) (int, error) {
	var v int
	err := tx.QueryRowContext(ctx, getSchemaVersionSQL, schemaVersionRow).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read schema version: %w", err)
	case v < 0:
		return 0, fmt.Errorf("%w: invalid schema version %d", ErrCorrupt, v)
	}
	return v, nil
}

// errForeignSchema marks a database whose tables conflict with the schema
// its version promises: another program's SQLite file.
var errForeignSchema = errors.New("unexpected schema")

// foreignSchema marks a migration statement's SQL error (SQLITE_ERROR: a
// table that already exists, a column that does not) as errForeignSchema.
// Other errors, such as a full disk, are returned unchanged: they say
// nothing about the file.
func foreignSchema(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrError {
		return fmt.Errorf("%w: %w", errForeignSchema, err)
	}
	return err
}
