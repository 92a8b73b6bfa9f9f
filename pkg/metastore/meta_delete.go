package metastore

import (
	"context"
	"fmt"
)

const deleteMetaSQL = `DELETE FROM meta WHERE key = ?`

// DeleteMeta removes the value stored under key; an unknown key is not an
// error. With secure_delete on, the value's bytes are overwritten.
func (s *Store) DeleteMeta(ctx context.Context, key string) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("delete meta %s: %w", key, err)
	}
	if _, err := s.writer.ExecContext(ctx, deleteMetaSQL, key); err != nil {
		return fmt.Errorf("delete meta %s: %w", key, err)
	}
	return nil
}

const deleteMetaPrefixSQL = `DELETE FROM meta WHERE substr(key, 1, ?) = ?`

// DeleteMetaPrefix removes every value whose key starts with prefix.
func (s *Store) DeleteMetaPrefix(ctx context.Context, prefix string) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("delete meta %s*: %w", prefix, err)
	}
	if prefix == "" {
		return fmt.Errorf("delete meta: empty prefix")
	}
	if _, err := s.writer.ExecContext(ctx, deleteMetaPrefixSQL, len(prefix), prefix); err != nil {
		return fmt.Errorf("delete meta %s*: %w", prefix, err)
	}
	return nil
}
