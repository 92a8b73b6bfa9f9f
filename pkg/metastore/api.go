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

// EventType is the type of a logged event. Its values are those of
// k8s.io/apimachinery/pkg/watch.EventType.
type EventType string

// Logged event types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is one logged change of a resource, as Apply recorded it.
type Event struct {
	Type EventType
	// Object is the new state; for Deleted, the last state carrying the
	// delete's RV (the Op's Object).
	Object Object
	// Prev is the raw encoding of the object's state before the event; nil
	// when there was none.
	Prev []byte
}

// Snapshot is a resource's stored state, read in one transaction.
type Snapshot struct {
	// Objects are ordered by namespace and name.
	Objects []Object
	// Watermark is the RV the objects are the state at; 0 if never synced.
	Watermark uint64
	// Events are the logged events, oldest first: every change with an
	// RV above LogFloor up to Watermark, and none at or below LogFloor.
	Events []Event
	// LogFloor is the oldest RV a watch can resume from with Events.
	LogFloor uint64
}
