// Package proxy reaches the cloud kube-apiserver for the local API: a
// reverse proxy that authenticates with the daemon's credentials (never a
// local client's), streams watches, passes upgrades through and answers
// 503 with a retry hint when the cloud cannot be reached, with its header
// waits bounded on the injected clock. Its requests go over the cloud
// connection every other client of the same rest.Config uses (one per node,
// as a kubelet's), whose dials that config's transport bounds. It also reads
// the resourceVersion a proxied write returned (written.go), without
// holding up the response.
package proxy
