// Package tokencache keeps the cloud's answers to TokenRequests (the
// kubelet's POST .../serviceaccounts/<sa>/token for projected
// service-account tokens) so that, after an offline reboot, the same
// request is answered from the store while the stored token is unexpired.
// It is an http.Handler wrapper around the local API.
//
// What is kept: only the node's own requests (Config.FromNode) for a
// token bound to a pod the node holds (Config.HeldPod), keyed by the
// pod's UID, so ForgetDeletedPods drops them when the pod leaves. A
// tenant's TokenRequest is forwarded and never kept.
//
// When: by outcome, not by the link prober. Every 201 the cloud gives to
// such a request is stored, and a forward that fails with 503 (the cloud
// cannot be reached) is answered from the store. While the prober says
// the link is down a stored answer is replayed at once, without waiting
// for a forward to fail.
//
// Until: the later of the answer's status.expirationTimestamp and its
// JWT's exp claim, which kube-apiserver extends to a year by default.
//
// Where: in the Store given; the daemon passes its sealed metastore when
// it has a state key and a MemoryStore otherwise.
package tokencache
