// Package tokencache keeps the cloud's answers to TokenRequests (the
// kubelet's POST .../serviceaccounts/<sa>/token for projected
// service-account tokens) so that, after an offline reboot, the same
// request is answered from the store while the stored token is unexpired.
// It is an http.Handler wrapper around the local API: online requests go
// to the wrapped handler (which forwards them to the cloud) and successful
// answers are stored; offline, a stored unexpired answer is replayed.
package tokencache
