// Package holding decides what this node holds and on whose identity: the
// sync scope (node scope for the node's own credentials, cluster scope
// only when configured, auto never widening to it), how the choice is
// stored for offline restarts and confirmed with the cloud afterwards,
// node scope's set of resources (what the Node authorizer lets the node
// read) and cluster scope's default list. The answers stored for outages
// are package offline's, which asks this package which pods the node
// holds. Configured checks the configured resources and expands them for
// the node, Scoped settles the scope and what it holds at start,
// LocalScopes tells the local API the held part of each resource
// (caches.go; listwatch/scope's Held, never the API itself, which offline
// and forpods, importing this package, must not reach), Syncers builds
// the sync loops of what the node lists and watches on its own
// credentials, each from its Upstream (the pool's leader or the cloud),
// and NewVerifier builds satoken's verifier on the node's pods and a
// token for one of them (wire.go). cmd wires it; the doors ask door who
// may read it.
package holding
