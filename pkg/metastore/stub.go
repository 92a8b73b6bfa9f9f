package metastore

import "context"

// Store is the SQLite-backed persistent state. Safe for concurrent use.
type Store struct{}

// Open opens (creating if needed) the database file at path with mode 0600,
// in WAL mode, and migrates its schema.
func Open(ctx context.Context, path string) (*Store, error) { panic("unimplemented") }

// Apply atomically applies ops to resource and sets its watermark, in one
// transaction.
func (s *Store) Apply(ctx context.Context, resource string, ops []Op, watermark uint64) error {
	panic("unimplemented")
}

// Load returns every stored object of resource, ordered by namespace and
// name, and its watermark (0 if never synced), read in one transaction.
func (s *Store) Load(ctx context.Context, resource string) ([]Object, uint64, error) {
	panic("unimplemented")
}

// Watermark returns resource's watermark, 0 if never synced.
func (s *Store) Watermark(ctx context.Context, resource string) (uint64, error) {
	panic("unimplemented")
}

// Resources lists every resource key that has a sync state.
func (s *Store) Resources(ctx context.Context) ([]string, error) { panic("unimplemented") }

// Drop removes a resource's objects and sync state in one transaction.
func (s *Store) Drop(ctx context.Context, resource string) error { panic("unimplemented") }

// PutMeta stores an opaque value under key (discovery info, cloud version).
func (s *Store) PutMeta(ctx context.Context, key string, value []byte) error {
	panic("unimplemented")
}

// GetMeta returns the value stored under key, or ErrNotFound.
func (s *Store) GetMeta(ctx context.Context, key string) ([]byte, error) { panic("unimplemented") }

// IntegrityCheck runs PRAGMA integrity_check and returns an error unless it
// says "ok".
func (s *Store) IntegrityCheck(ctx context.Context) error { panic("unimplemented") }

// Close checkpoints the WAL and closes the database.
func (s *Store) Close() error { panic("unimplemented") }
