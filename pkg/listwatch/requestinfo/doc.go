// Package requestinfo resolves an HTTP request to what it asks of the
// Kubernetes API (verb, group, version, resource, namespace, name,
// subresource, selectors), as k8s.io/apiserver's RequestInfoFactory does
// for the /api and /apis prefixes. The TLS door authorizes those attributes
// and the metrics label requests with the same verb and resource.
package requestinfo
