// Package door guards the local API's two doors.
//
// The loopback door serves the node's kubelet with the daemon's own
// identity: it accepts only loopback Host headers (DNS rebinding defence).
// The TLS door serves tenants (pods, other processes): every caller is
// authenticated in kube-apiserver's order (client certificate, then bearer
// token: a service-account token bound to one of the node's own pods is
// verified on the node by package satoken, any other is reviewed by the
// cloud, and refused while offline once satoken holds the cloud's keys)
// and authorized with a SubjectAccessReview for
// the exact request, so a tenant gets what its own identity may do in the
// cloud and never what the node holds. Reviews and decisions are kept by
// package offline, in memory and, through an injected DecisionStore,
// durably within a bounded grace; offline decides what may be stored
// (only decisions on resources the daemon holds, within a quota per
// identity) and door when a stored answer may stand in for the cloud.
//
// Identity comes before capacity: nothing shared is spent on a request
// before its caller is known but the token review its source's budget
// allows (budget.go). In-flight slots, watch caps and review bytes are
// counted by identity after authentication (limits.go); this node's
// identity has a reserved lane of connections, admitted only by a
// handshake presenting its certificate (conns.go, tls_identity.go), and of
// in-flight slots, which no other identity can take. A spent limit or
// budget is answered 429 with Retry-After, never 401. Anonymous callers
// get the terse health answers only (terse.go).
//
// Both doors are http.Handler wrappers around the local API. They record
// the caller and how the proxy may forward for it (with the daemon's
// credentials, with the caller's own bearer token over a transport without
// a client certificate, or not at all) in the request's context through
// package listwatch/caller, which the API reads; the API never imports the
// doors.
//
// A door listens on the socket systemd passed for it when there is one
// (inherit.go, socket activation): each passed socket is taken by the door
// its name (FileDescriptorName=) gives, and only where the door's address
// and the socket's bound address agree; a door without its socket or a
// socket no door takes stops the start. Only the TCP listener is passed:
// TLS and the connection limits stay the door's. A door's shutdown
// (drain.go) finishes the requests in flight and closes its connections
// once none has been for DrainGrace, rather than keeping idle HTTP/2
// connections for net/http's one-second GOAWAY timeout: a restart's
// queued clients wait in the socket's backlog, not on the old daemon.
//
// OpenSet builds the door set from its settings (set*.go): which doors
// open, the chain the kubelet's and the pods' doors share, their
// certificates and limits, the pool door, and the pods' door's wait for
// an address no interface holds yet (retried, noted in /readyz, never
// failing it). cmd only fills in SetConfig and runs the set.
package door
