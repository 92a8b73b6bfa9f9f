// Package cloudsync keeps the edge copy of each configured resource in step
// with the cloud kube-apiserver.
//
// For every resource a Syncer lists (paged) and then watches the cloud with
// bookmarks. Each batch of watch events is first committed to the Store in
// one transaction, together with the resource's watermark, and only then
// applied to the Cache that local clients read. The cloud's
// resourceVersions are kept unchanged.
//
// Cloud objects are listed in JSON through RawClient and kept as the bytes
// the cloud sent: each is decoded once, for the few fields selectors and
// indexes need, and never held as a decoded tree. Watches ask for
// protobuf, as a kubelet does, and each object that comes in protobuf is
// stored as the JSON its Go type encodes, byte for byte the cloud's; one
// that would lose a field turns protobuf off (protocodec.go). A LIST is turned into
// stored objects page by page, and a burst of watch events is committed
// together (group commit) before it is fanned out.
//
// Package startup turns the stored state into the caches a syncer starts
// from, and reloads a cache when the cache refuses a batch.
//
// On start a Syncer resumes the watch from the stored watermark. It relists
// only when the cloud answers 410 Gone/Expired; the relist result is diffed
// against the stored state and published as ADDED, MODIFIED and DELETED
// events (deletes at the new list resourceVersion), so local watchers carry
// on without a relist of their own. A relist whose resourceVersion is
// behind the watermark, or that returns an object we hold with another UID
// at a version the watermark covers, means the cloud was restored from a
// backup: the local state is replaced by the list, watermark included, and
// local watchers relist. A watch from a watermark a restored cloud has
// not reached would wait silently, so a resumed watch's first event is
// held until the cloud's resource version, read with a LIST of one
// object, is known not to be behind: once per start, and again only after
// a failure that may hide a cloud restart (a transport error or a dead
// link, not a Status the running cloud answered). A resumed watch whose
// first frame is a 410 needs no check (the relist checks), so a cloud
// restart, which expires every watermark, costs none. The syncers of one
// cloud share that reading (link.Link.CloudRV): the cloud's resource
// versions are one etcd revision for every built-in resource, so a start
// costs one such LIST, not one per resource; events, which a cloud may
// keep in an etcd of their own, and groups of no built-in kind, which an
// aggregated API server may serve, read their own.
//
// Such a relist of a resource synced before is lean when it can be: it
// lists only the objects' metadata (PartialObjectMetadataList, protobuf),
// compares resourceVersions and UIDs with the stored keys, and reads each
// new or changed object alone, a few at a time (or, where a namespace
// holds at least 3 of them and at most 4 listed objects per one, with one
// list of that namespace), at exactly the list's resourceVersion, so the result is the state of one moment as a full list
// gives it. The full list remains for the first sync, a cloud without
// metadata lists, a regression, many changes, and any read that does not
// match the metadata list.
//
// Whether the cloud is up is package link's answer (one Link per cloud):
// a syncer waits on it instead of retrying into an outage, and retries
// with its jittered backoff, reset only after a successful commit, so a
// failing store pauses the sync instead of storming the cloud with LISTs.
//
// A syncer looks its resource up in the cloud's discovery before its first
// list; SharedDiscovery makes concurrent lookups of one group version (every
// sync's at start) one request, keeping nothing after it returns.
package cloudsync
