package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// integrityOK is the single row PRAGMA integrity_check and quick_check
// return for a sound database.
const integrityOK = "ok"

// Integrity checks. quick_check verifies every page and record but not
// that indexes match their tables, in time linear in the file size, so it
// runs at every Open; integrity_check also cross-checks indexes.
const (
	integrityCheckSQL = "PRAGMA integrity_check"
	quickCheckSQL     = "PRAGMA quick_check"
)

// IntegrityCheck runs PRAGMA integrity_check and returns an error unless it
// says "ok". Damage is reported as ErrCorrupt with SQLite's findings.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if err := check(ctx, s.reader, integrityCheckSQL); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	return nil
}

// maxFindings bounds how many of SQLite's findings an error quotes.
const maxFindings = 5

// check runs an integrity check pragma on db and returns nil if it says
// "ok", else ErrCorrupt with SQLite's first findings.
func check(ctx context.Context, db *sql.DB, pragma string) error {
	findings, err := findings(ctx, db, pragma)
	if err != nil {
		return classify(err)
	}
	if len(findings) == 1 && findings[0] == integrityOK {
		return nil
	}
	if len(findings) > maxFindings {
		findings = append(findings[:maxFindings], "...")
	}
	return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(findings, "; "))
}

// findings returns the rows of an integrity check pragma.
func findings(ctx context.Context, db *sql.DB, pragma string) ([]string, error) {
	rows, err := db.QueryContext(ctx, pragma)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var findings []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		findings = append(findings, line)
	}
	return findings, rows.Err()
}

// classify marks SQLite's own corruption errors, which damage severe enough
// to stop the check produces, as ErrCorrupt.
func classify(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}
