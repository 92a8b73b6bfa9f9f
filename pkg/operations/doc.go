// Package operations is the daemon's operational view, answered on every
// door and never proxied: Prometheus metrics, kube-apiserver's /livez,
// /readyz and /healthz checks (live unless wedged; ready when the store
// takes writes, every resource has data and each is fresh while the cloud
// is reachable), the status document that `apiserver-lite status` reads
// (askstatus.go: through the authenticated door with a kubeconfig, or the
// plain-HTTP one)
// and `inspect` builds from a stopped daemon's store, its table, and the
// sd_notify protocol with systemd (READY=1, WATCHDOG=1 while alive,
// STATUS= lines, STOPPING=1). Resources held in a namespace for its pods
// (namespaced.go) are notes in /readyz, never failing it, and have their
// own part of the status document and table. cmd constructs it and wires
// it to the doors and the sync loops.
package operations
