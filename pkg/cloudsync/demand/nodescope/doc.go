// Package nodescope decides what a node-scoped apiserver-lite may hold:
// the secrets and configmaps that pods bound to the node reference, as the
// Kubernetes Node authorizer's graph computes them, and which of them are
// still referenced as pods come and go. It is pure logic: no I/O. A pod's
// or node's references are read from its JSON (PodRefsJSON, NodeRefsJSON)
// by decoding only the fields that name them, since every change of a pod
// is read again; the result is PodRefs' of the whole object.
package nodescope
