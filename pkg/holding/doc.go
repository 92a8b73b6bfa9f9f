// Package holding decides what this node holds and on whose identity: the
// sync scope (node scope for the node's own credentials, cluster scope
// only when configured, auto never widening to it), how the choice is
// stored for offline restarts and confirmed with the cloud afterwards,
// node scope's set of resources (what the Node authorizer lets the node
// read), cluster scope's default list, and what is answered from stored
// answers while the cloud is away (the kubelet's TokenRequests for pods
// the node holds, node scope's get-only reads). cmd wires it; the doors
// ask door who may read it.
package holding
