// Package demand holds, in node scope, the secrets and configmaps that
// the node's pods (and its Node) reference, and nothing else: the set the
// Node authorizer lets the node read. Each referenced object is watched
// on its own, by name, as the kubelet does, and committed to the store and
// its cache like any synced object; when the last reference goes, the
// object is deleted from both and its bytes are scrubbed from disk.
// Subpackage nodescope computes the references. cmd wires a Holder.
package demand
