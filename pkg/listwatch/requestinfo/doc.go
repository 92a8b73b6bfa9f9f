// Package requestinfo resolves an HTTP request to what it asks of the
// Kubernetes API (verb, group, version, resource, namespace, name,
// subresource, selectors) with k8s.io/apiserver's RequestInfoFactory, and
// classifies long-running requests as kube-apiserver does. Both doors
// authorize and limit by those attributes, and the metrics label requests
// with the same verb and resource.
package requestinfo
