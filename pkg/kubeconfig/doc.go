// Package kubeconfig builds a kubeconfig for the daemon's local door
// (listen-address) from the kubelet's client certificate and the CA of the
// daemon's serving certificate, checked before it is written, and writes
// it privately (mode 0600, through a rename). cmd holds the flags and
// reads the daemon's settings.
package kubeconfig
