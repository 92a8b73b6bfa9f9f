package metastore

import (
	"context"
	"fmt"
)

// MetaWithPrefix returns every meta value whose key starts with prefix,
// by key, opened when its key's values are sealed. A sealed value that
// does not open fails the call.
func (s *Store) MetaWithPrefix(ctx context.Context, prefix string) (map[string][]byte, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("list meta %s*: %w", prefix, err)
	}
	rows, err := s.reader.QueryContext(ctx, selectMetaPrefixSQL, len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("list meta %s*: %w", prefix, err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("list meta %s*: %w", prefix, err)
		}
		if v, err = s.openMeta(k, v); err != nil {
			return nil, fmt.Errorf("list meta %s: %w", k, err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list meta %s*: %w", prefix, err)
	}
	return out, nil
}
