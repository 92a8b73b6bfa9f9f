// Package nodescope decides what a node-scoped apiserver-lite may hold:
// the secrets and configmaps that pods bound to the node reference, as the
// Kubernetes Node authorizer's graph computes them, and which of them are
// still referenced as pods come and go. It is pure logic: no I/O.
package nodescope
