package metastore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// NodeNameKey is the meta key holding the node name the daemon last ran
// as; snapshots carry it, and restoring one refuses another node's.
const NodeNameKey = "daemon/node-name"

const (
	putMetaSQL = `INSERT INTO meta (key, value) VALUES (?, ?)
ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	getMetaSQL = `SELECT value FROM meta WHERE key = ?`
)

// PutMeta stores an opaque value under key (discovery info, cloud version).
func (s *Store) PutMeta(ctx context.Context, key string, value []byte) error {
	if err := s.checkOpen(); err != nil {
		return fmt.Errorf("put meta %s: %w", key, err)
	}
	if s.sealsMeta(key) {
		return s.putSealedMeta(ctx, key, value)
	}
	if _, err := s.writer.ExecContext(ctx, putMetaSQL, key, value); err != nil {
		return fmt.Errorf("put meta %s: %w", key, classifyWrite(err))
	}
	return nil
}

// putSealedMeta seals value inside the write transaction, so a concurrent
// Rekey cannot slip between the sealing and the write.
func (s *Store) putSealedMeta(ctx context.Context, key string, value []byte) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		sealed, err := seal(s.sealer(), value, metaAD(key))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, putMetaSQL, key, sealed)
		return err
	})
	if err != nil {
		return fmt.Errorf("put meta %s: %w", key, err)
	}
	return nil
}

// GetMeta returns the value stored under key, or ErrNotFound.
func (s *Store) GetMeta(ctx context.Context, key string) ([]byte, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("get meta %s: %w", key, err)
	}
	var value []byte
	err := s.reader.QueryRowContext(ctx, getMetaSQL, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get meta %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get meta %s: %w", key, err)
	}
	if value, err = s.openMeta(key, value); err != nil {
		return nil, fmt.Errorf("get meta %s: %w", key, err)
	}
	return value, nil
}

// openMeta opens value when the key's values are sealed.
func (s *Store) openMeta(key string, value []byte) ([]byte, error) {
	if !s.sealsMeta(key) {
		return value, nil
	}
	return s.open(value, metaAD(key))
}
