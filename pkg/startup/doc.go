// Package startup turns the stored state into caches: at start-up, before
// the local API opens (a cold start's cost), and whenever a syncer must
// reload a cache from its store. It reads SQLite through Store and never
// touches the cloud.
//
// LoadCaches loads two resources at a time, decodes each resource's
// objects on every core while the store is still reading them, and decodes
// the event log's own object versions likewise; the caches and the shared
// versions are exactly those of a one-by-one load. Fill makes a stored
// event log a cache's event ring, so a local watch from before a restart
// resumes with exactly the events it missed.
//
// Three words are kept apart: startup loads caches from the store;
// versioncache.Restore puts decoded state into one cache; snapshot.Restore
// unpacks a backup of the data directory.
package startup
