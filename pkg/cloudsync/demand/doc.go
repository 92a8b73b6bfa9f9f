// Package demand holds, in node scope, the secrets and configmaps that
// the node's pods (and its Node) reference, and nothing else: the set the
// Node authorizer lets the node read. Each referenced object is watched
// on its own, by name, as the kubelet does, and committed to the store and
// its cache like any synced object; when the last reference goes, the
// object is deleted from both and its bytes are scrubbed from disk.
//
// Each object's watch resumes, after a restart too, from the last
// resourceVersion it delivered (list, event or bookmark), so a restart
// lists nothing: the resume points are kept in the store's meta, written
// only after what came with them was committed, and a point is deleted
// from the store before its object is. Only a 410 reads one object again,
// and a cloud whose history went backwards (a syncer reports it on the
// Link) reads every held object again.
//
// An object without a resume point is read with one streaming watch
// (sendInitialEvents=true, resourceVersionMatch=NotOlderThan, no
// resourceVersion, as client-go's WatchList reflectors send): its initial
// events up to the bookmark that ends them are the object's state at the
// bookmark's resourceVersion, taken as a LIST's answer would be, and the
// same stream then carries its changes. A bookmark before that one says
// nothing of the state and moves no resume point. Once the cloud refuses
// such a watch (400 or 422) for a kind, that kind's objects are listed
// and then watched, until the Holder stops. An object whose watch lost
// the cloud (no answer, or a half-open link) is read again that way once
// the link is up, after a delay within the relist window, instead of
// being resumed: a restarted cloud would answer the resume with a 410,
// and the read after it would make two requests where one does.
//
// A refused read is retried on the object's own jittered backoff from 1 s
// (backoff.go); only a new reference's first read refused 403 (the Node
// authorizer's graph may not have the pod yet) is retried after 100-200 ms.
//
// Subpackage nodescope computes the references. cmd wires a Holder.
package demand
