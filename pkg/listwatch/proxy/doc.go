// Package proxy reaches the cloud kube-apiserver for the local API: a
// reverse proxy that authenticates with the daemon's credentials (never a
// local client's), streams watches, passes upgrades through and answers
// 503 with a retry hint when the cloud cannot be reached, with its
// connection and header waits bounded on the injected clock. It also reads
// the resourceVersion a proxied write returned (written.go), without
// holding up the response.
package proxy
