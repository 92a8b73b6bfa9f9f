// Package versioncache keeps, per resource, the current objects and a
// bounded ring of recent events, and fans the events out to local watchers.
// It is modelled on kube-apiserver's watch cache (watch_cache.go and
// cache_watcher.go in k8s.io/apiserver/pkg/storage/cacher).
//
// # State and resourceVersions
//
// A Cache starts not ready. Replace loads the whole state at an RV (after a
// cloud list); Restore loads it with the durable event log (from the
// metastore at startup), so watches resume across a restart. Apply then adds batches of
// events that are already durable, in RV order (events of one batch may
// share an RV; across batches RVs strictly increase), and may
// advance the RV past the last event (a cloud bookmark), which watchers see
// as a progress marker: an Event of type watch.Bookmark with a nil Object.
// Get and ListPage read the state at the cache RV, which ListPage returns
// as the snapshot RV. ListPage also reads the state at an older RV, as far
// back as a watch could start: it rolls the current state back through the ring's
// events (each keeps the object's previous state), so no snapshot is kept.
// Objects are ordered by kube-apiserver's storage key, "<namespace>/<name>"
// compared byte-wise.
//
// # Watches
//
// A watch from RV N replays the ring's events after N and then follows live
// events. As in kube, while no event has been evicted since Replace the
// oldest servable N is the Replace RV; after that it is one less than the
// oldest ring event's RV. Older N yields a *TooOldError, whose message is
// kube's "too old resource version: N (M)". A sendState watch starts with a
// synthetic Added event per current object instead.
//
// Predicates are applied per watcher as kube's cacheWatcher does: an object
// that starts matching arrives as Added, one that stops matching as Deleted
// carrying its previous state with the event's RV. Progress markers reach
// every watcher.
//
// # Fan-out
//
// Each applied event's frame (Event.Frame) is shared: while any watcher
// holds it, the same bytes go to every watcher; the ring keeps the event's
// objects but not its frames, which are freed once no watcher holds them
// and encoded again if a replay asks (see frameCache). Each watcher has a bounded
// channel, as large as the event ring (up to maxWatcherBuffer), so a burst
// the ring can replay never evicts a healthy watcher. Dispatch never
// blocks: a watcher whose channel is full is evicted (its channel closed,
// Evicted true), as kube's cacher closes a watcher that falls behind, so a
// stalled client can neither delay other watchers nor stall the sync loop
// nor grow memory. Its client re-watches from the last RV it received.
//
// # Objects
//
// Objects are immutable once built by NewObject, which decodes only the
// metadata (its UID included) and the fields a field selector may name, as
// the kinds table (package kinds) defines them per kind, in one walk of
// pkg/jsonscan. Raw is kept as given. versioncache imports only kinds and
// jsonscan of the project.
package versioncache
