package metastore

import "errors"

// ErrWatermarkRegression is returned by Apply when the new watermark is
// lower than the stored one: the watermark never moves backwards.
var ErrWatermarkRegression = errors.New("watermark regression")

// ErrNotFound is returned by GetMeta for an unknown key.
var ErrNotFound = errors.New("not found")

// ErrSchemaTooNew is returned by Open when the database was migrated by a
// newer version of this code: its schema may not be understood, so it is
// left untouched.
var ErrSchemaTooNew = errors.New("schema version newer than supported")

// ErrClosed is returned by every method called after Close, including a
// second Close.
var ErrClosed = errors.New("metastore closed")

// ErrWrite is wrapped by every error of a write (Apply, Drop, PutMeta)
// that the storage refused: an I/O error, a read-only file system, or a
// full disk (then ErrStorageFull, which wraps ErrWrite). Nothing of the
// write is stored and the Store stays usable: reads serve the last
// committed state, and the write may be retried once storage recovers.
var ErrWrite = errors.New("storage write failed")

// ErrStorageFull is wrapped by the error of a write refused because the
// disk (or the database's size limit) is full. errors.Is(err, ErrWrite)
// holds for it too.
var ErrStorageFull error = storageFullError{}

// storageFullError is ErrStorageFull: a kind of ErrWrite.
type storageFullError struct{}

func (storageFullError) Error() string        { return "storage full" }
func (storageFullError) Is(target error) bool { return target == ErrWrite }

// ErrCorrupt is returned by IntegrityCheck when SQLite reports damage.
var ErrCorrupt = errors.New("database corrupt")

// Object is one stored object of a resource.
type Object struct {
	Namespace string // "" for cluster-scoped objects
	Name      string
	RV        uint64 // the cloud's metadata.resourceVersion
	Raw       []byte // the JSON encoding as served
}

// Op is one change inside a batch: an upsert of Object, or, when Delete is
// set, the removal of (Object.Namespace, Object.Name).
type Op struct {
	Delete bool
	Object Object
}
