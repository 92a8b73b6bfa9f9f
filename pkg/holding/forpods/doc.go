// Package forpods holds resources for the node's pods' own identities:
// the node's system components (kube-proxy, DNS, the CNI agent) read
// services, EndpointSlices, namespaces and the like with their service
// accounts, which the Node authorizer does not let the node read.
//
// A holding starts when a service-account token bound to a pod on this
// node, of a service account the operator allows to own holdings
// (Allowed, pod-identity-owners), lists or watches, cluster-wide and
// authorized by the cloud, a resource of the configured list. Any other
// pod's read neither starts a holding nor makes it an owner: a tenant
// never becomes the identity a holding syncs on. The resource is then listed and
// watched once, cluster-wide, on a token the daemon requests with the
// node's own credentials for that pod's service account and bound to that
// pod (as the kubelet does for projected volumes), renewed before it
// expires, through the same sync path as every other resource: one SQLite
// transaction per batch with the cloud's resourceVersions, the event log,
// and a cache local clients read. Every read of it is still authorized for
// its own caller at the door. The sync runs on one owner's tokens at a
// time; an owner the cloud refuses (a 4xx to its TokenRequest, a 401 or
// 403 to the sync) is dropped and the next tried at once (failover.go);
// while no owner syncs, Current is false and reads go to the cloud while
// it is reachable. A resource the node's scope syncs in part (Nodes) is
// held whole (Held.Widens) beside the node's view, which ForPods leaves to
// the node's identity.
//
// The pods a holding is held for (its owners) are stored, so a restart
// resumes the holding from its watermark without waiting for a component
// to call. When the last owner leaves the node, the watch stops after a
// short grace (a DaemonSet's replacement pod reads again within it), and
// the resource's rows are dropped and scrubbed from disk. At most Max
// resources are held; beyond that reads stay the cloud's and a counter
// says so.
//
// Namespaced (namespaced*.go) holds, for the pods of one namespace on this
// node, what they list or watch in that namespace on their own identities
// (built-in kinds and custom resources; secrets only when allowed), one
// holding per (resource, namespace), each with its own cache, syncer and
// local API. Invariants: only a pod of namespace N starts or owns a holding
// in N; the resource is discovered and synced on a token bound to an
// owner, never on the node's identity; a 404 or 403 of the cloud stops the
// holding (ErrGone); nothing that would cross a cap (Caps) is committed;
// only a caller authorized per request by the cloud is routed to a
// holding, never the node's own identity; stopped holdings' data is
// dropped and scrubbed after dropGrace as above.
//
// NewForNode and NewNamespacedForNode (node.go) build both from the
// pod-identity-* settings and the node's clients; cmd only fills in
// NodeConfig. In a pool (pool.go), PoolMember puts the node's membership
// on its clients, SyncDeps.InPool reads the holdings from the leader and
// PoolDoor is what the leader's pool door serves and when. node_of.go
// shows both kinds of holdings to the doors (DoorHoldings, DoorHeld), the
// local API and the run loop, nil for none.
package forpods
