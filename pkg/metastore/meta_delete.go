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
