// Package readcache keeps the cloud's answers to GETs of single objects of
// kinds a node may get but not list or watch (persistentvolumeclaims,
// persistentvolumes, the node's lease and csinode, volumeattachments), so
// that they are served while the cloud is unreachable. It is an
// http.Handler wrapper around the local API: while online, requests go to
// the wrapped handler (which forwards them to the cloud); a 200 answer is
// stored and a 403 or 404 removes the stored copy. Offline, a stored
// answer is replayed.
package readcache
