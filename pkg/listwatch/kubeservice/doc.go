// Package kubeservice points the node's kubelet at the local door: in what
// the node's own identity reads, the default/kubernetes Service shows the
// door's address and port, so the kubelet gives every new pod
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT of the door, as
// OpenYurt's YurtHub does. Every other caller (kube-proxy, tenants) sees the
// cloud's object, so service routing is untouched.
//
// The rewrite happens when an object is served, never in the cache or the
// store: switching it off shows the cloud's values again at once, and each
// pod gets them when it is next started.
package kubeservice
