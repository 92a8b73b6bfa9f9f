package metastore

import (
	"context"
	"database/sql"
	"fmt"
)

const selectMetaPrefixSQL = `SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?`

// PruneMeta deletes, in one transaction, every value whose key starts with
// prefix and that dead reports, and returns how many it deleted. dead sees
// the stored bytes, which may be damaged. With secure_delete on, the
// deleted values' bytes are overwritten. A sealed value that does not open
// is deleted too.
func (s *Store) PruneMeta(ctx context.Context, prefix string, dead func(value []byte) bool) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, fmt.Errorf("prune meta %s*: %w", prefix, err)
	}
	if prefix == "" {
		return 0, fmt.Errorf("prune meta: empty prefix")
	}
	n := 0
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		keys, err := deadMetaKeys(ctx, tx, prefix, func(k string, v []byte) bool {
			plain, err := s.openMeta(k, v)
			return err != nil || dead(plain) // a value that does not open is of no use
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, deleteMetaSQL, k); err != nil {
				return err
			}
		}
		n = len(keys)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune meta %s*: %w", prefix, err)
	}
	return n, nil
}

// deadMetaKeys returns the keys under prefix whose values dead reports.
func deadMetaKeys(ctx context.Context, tx *sql.Tx, prefix string, dead func(key string, value []byte) bool) ([]string, error) {
	rows, err := tx.QueryContext(ctx, selectMetaPrefixSQL, len(prefix), prefix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if dead(k, v) {
			keys = append(keys, k)
		}
	}
	return keys, rows.Err()
}
