package metastore

import (
	"context"
	"database/sql"
	"fmt"
)

// metaUsageSQL counts the values under a key prefix and their stored
// bytes (sealed values count as stored, with their seal).
const metaUsageSQL = `SELECT count(*), coalesce(sum(length(value)), 0) FROM meta WHERE substr(key, 1, ?) = ?`

// MetaUsage is how many values are stored under a key prefix, and their
// bytes.
type MetaUsage struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

// MetaUsage returns how many values are stored under prefix and their
// bytes, so that callers can keep a prefix within a quota.
func (s *Store) MetaUsage(ctx context.Context, prefix string) (MetaUsage, error) {
	if err := s.checkOpen(); err != nil {
		return MetaUsage{}, fmt.Errorf("meta usage %s*: %w", prefix, err)
	}
	u, err := metaUsage(ctx, s.reader.QueryRowContext, prefix)
	if err != nil {
		return MetaUsage{}, fmt.Errorf("meta usage %s*: %w", prefix, err)
	}
	return u, nil
}

func metaUsage(ctx context.Context, query func(context.Context, string, ...any) *sql.Row, prefix string) (MetaUsage, error) {
	var u MetaUsage
	err := query(ctx, metaUsageSQL, len(prefix), prefix).Scan(&u.Count, &u.Bytes)
	return u, err
}

// InspectMetaUsage returns MetaUsage for each prefix of the database at
// path, in order, opened read-only as Inspect does.
func InspectMetaUsage(ctx context.Context, path string, prefixes ...string) ([]MetaUsage, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	defer db.Close()
	out := make([]MetaUsage, 0, len(prefixes))
	for _, p := range prefixes {
		u, err := metaUsage(ctx, db.QueryRowContext, p)
		if err != nil {
			return nil, fmt.Errorf("inspect meta usage %s*: %w", p, classify(err))
		}
		out = append(out, u)
	}
	return out, nil
}
