package metastore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// integrityOK is the single row PRAGMA integrity_check returns for a sound
// database.
const integrityOK = "ok"

// IntegrityCheck runs PRAGMA integrity_check and returns an error unless it
// says "ok". Damage is reported as ErrCorrupt with SQLite's findings.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	findings, err := s.integrityFindings(ctx)
	if err != nil {
		return fmt.Errorf("integrity check: %w", classify(err))
	}
	if len(findings) == 1 && findings[0] == integrityOK {
		return nil
	}
	return fmt.Errorf("integrity check: %w: %s", ErrCorrupt, strings.Join(findings, "; "))
}

// integrityFindings returns the rows of PRAGMA integrity_check.
func (s *Store) integrityFindings(ctx context.Context) ([]string, error) {
	rows, err := s.reader.QueryContext(ctx, "PRAGMA integrity_check")
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
