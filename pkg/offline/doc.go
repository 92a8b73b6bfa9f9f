// Package offline keeps the cloud's answers that stand in for it while it
// cannot be asked: the kubelet's TokenRequest answers, reviewed tokens,
// authorization decisions and the node's answers to GETs of kinds it may
// get but not list. Every kind goes through one Memo (memory, store and
// grace) under a key prefix of the one registry in keys.go, which the
// daemon seals at rest, snapshots leave out, and `inspect` counts.
//
// Invariants:
//   - Stored answers are the node's, and bounded. TokenRequest answers and
//     get-only answers are stored and replayed only for the node's own
//     identity (FromNode); a tenant's are forwarded and never kept.
//     Get-only answers are keyed by path and negotiated media type (never
//     the raw Accept header), stored with their body decoded, and capped
//     in count and bytes. Decisions are stored only for an allowed get,
//     list or watch of a resource the daemon holds, within a quota per
//     identity; denials, non-resource paths, subresources and forwarded-
//     only resources stay in memory.
//   - A stored answer is used only while the cloud cannot be asked (the
//     link is down, or for TokenRequests a forward failed with 503), and
//     only within its grace or before its expiry; PruneStored and
//     PruneExpired delete what is past use, including rows stored before
//     these rules.
//   - Keys are hashes or API paths, never a token.
//
// TokenRequests: only the node's own requests for a token bound to a pod
// the node holds (TokenRequestConfig.HeldPod), keyed by the pod's UID, so
// ForgetDeletedPods drops them when the pod leaves. Every 201 the cloud
// gives to such a request is stored whatever the link state, and kept
// until the later of the answer's status.expirationTimestamp and its JWT's
// exp claim, which kube-apiserver extends to a year by default. The daemon
// passes its sealed metastore when it has a state key and a MemoryStore
// otherwise.
//
// Package listwatch (and its subpackages) never imports this package nor
// the doors: it serves the API only; the daemon wraps it.
package offline
