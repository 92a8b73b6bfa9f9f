// Package demand holds, in node scope, the secrets and configmaps that
// the node's pods (and its Node) reference, and nothing else: the set the
// Node authorizer lets the node read. Each referenced object is watched
// on its own, by name, as the kubelet does, and committed to the store and
// its cache like any synced object; when the last reference goes, the
// object is deleted from both and its bytes are scrubbed from disk.
//
// Every read but a new reference's first is of an object the node holds
// and serves, and goes to the cloud as cloudsync.Background, behind what
// the node waits for (a new pod's references among it).
//
// Each object's watch resumes, after a restart too, from the last
// resourceVersion it delivered (list, event or bookmark), so a restart
// lists nothing: the resume points are kept in the store's meta, written
// only after what came with them was committed, and a point is deleted
// from the store before its object is. Only a 410 reads one object again
// (at once when it answers the start's own resume before anything came:
// the cloud restarted while the daemon was down, not under every node;
// such a 410 also drops the start's resumes of that kind from points not
// above it while they wait for their place, unsent, see expire.go),
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
// and then watched, until the Holder stops.
//
// A watch that lost the cloud (no answer, or a half-open link) may have
// lost a restarted cloud, which answers every resume with 410 since its
// watch cache starts above every stored point. The workers that lost it
// together share one outage (probe.go): once the link is up, the one
// with the newest resume point resumes alone, as the probe, while the
// others wait on the outage's one answer. A 410 to the probe means every
// older point is gone too: each object is read again with a streaming
// watch after a delay within the relist window (one request per object,
// where a resume and the read after its 410 are two). A probe that opens
// and, within probeSettle, delivers an event or nothing (no 410) means
// the cloud was not restarted: each object resumes from its own point, at
// no byte cost; one that still gets a 410 is read again on its own.
// Invariants: an outage is decided once, under prober.mu, by the worker
// probing it, and a decided outage is never joined again, so a loss after
// an answer starts a new outage (epoch) and its own probe; a worker that
// stops while chosen to probe hands the choice back to the newest of the
// others; no goroutine is started for it, and its one timer (probeSettle)
// runs on the injected clock. An object never held (no resume point) is
// read again after the relist delay without waiting for the probe.
//
// A refused read is retried (retry.go: a worker's loop, what each end of a
// read waits for) on the object's own jittered backoff from 1 s
// (backoff.go); only a new reference's first read refused 403 (the Node
// authorizer's graph may not have the pod yet) is retried after 100-200 ms.
//
// Subpackage nodescope computes the references. Runner (wire.go) builds a
// Holder of the synced resources' on-demand kinds; cmd wires it.
package demand
