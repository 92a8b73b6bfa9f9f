// Package metastore is the durable state of apiserver-lite: every object the
// node has synced from the cloud, keyed by (resource, namespace, name) and
// stored with its unchanged cloud resourceVersion, plus one watermark and
// one bounded event log per resource and a small key/value table for
// discovery and version metadata.
//
// Storage is a single SQLite file in WAL mode with synchronous=FULL, so a
// batch returned by Apply without error has been fsynced and survives a
// crash or power loss; callers publish events to clients only after that.
//
// Invariants:
//
//   - A resource's watermark is never ahead of its data, nor behind it: Apply
//     writes the objects of a batch and the watermark in one transaction, so
//     after any crash the stored objects are exactly the state at the stored
//     watermark.
//   - The watermark never decreases: Apply rejects a lower watermark with
//     ErrWatermarkRegression and writes nothing. An equal watermark is allowed
//     (a re-list at an unchanged resourceVersion). Only Drop resets it.
//   - A batch is all or nothing: on any error the transaction rolls back and
//     no reader ever sees part of it.
//   - Load reads objects and watermark in one read transaction, so the pair
//     is a consistent snapshot even while Apply runs; LoadSnapshot adds the
//     event log, and StreamSnapshot hands the objects over in slices while
//     that same transaction reads them, so a restore decodes as it reads.
//   - The event log of a resource holds every event with an RV above its
//     floor up to its watermark, in commit order, and at most
//     Options.EventLogSize of them: Apply appends a batch's events in the
//     batch's transaction, trims the oldest and raises the floor past them,
//     and restarts the log at the watermark when a batch does not continue
//     it. So a local watch cache restored from it after a restart serves
//     the same watches with the same events as before.
//
// Storage failures: a write the storage refuses (a full disk, an I/O
// error) fails with an error wrapping ErrWrite, ErrStorageFull for a full
// disk, rolls back whole, and leaves the Store usable: reads keep serving
// the last committed state and a later write succeeds once space returns.
//
// Concurrency: all writes go through one SQLite connection, which serializes
// them inside the process and avoids SQLITE_BUSY between writers. Reads use
// a separate pool of query-only connections and, thanks to WAL, run in
// parallel with the writer without blocking it.
//
// Encryption at rest: with Options.Sealing's key, the objects and logged
// events (prev included) of the resources it names, and the meta values
// under the keys it names, are sealed with AEAD and the row's key as
// associated data, and opened once when read. A key check value in the
// meta table makes Open refuse another key (ErrWrongKey) or no key
// (ErrKeyRequired) before it reads or writes anything else; the first
// Open with a key seals what an earlier plaintext run stored, and Rekey
// moves every sealed value to a new key, each in one transaction.
//
// The schema is versioned: Open checks the file with PRAGMA quick_check
// (ErrCorrupt), applies any pending migrations in order and refuses
// (ErrSchemaTooNew) a database written by a newer schema. OpenOrRecover
// instead moves such a file aside to "<name>.corrupt-<unix-time>" and
// starts empty, so a damaged disk never makes the daemon crash-loop. A
// stored row that does not decode is logged and skipped by Load.
//
// A leaf: metastore imports nothing of the project's but pkg/jsonscan,
// itself a leaf, with which Keys reads the UID of a sealed object that
// SQLite cannot look into.
package metastore
