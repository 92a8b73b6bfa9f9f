// Package listwatch serves the node-local, Kubernetes-compatible HTTP API.
//
// Reads (get, list, watch) of the configured resources are answered from
// memory by pkg/versioncache, so kubelet, client-go and kubectl keep working
// while the cloud kube-apiserver is unreachable. Everything else - writes,
// subresources, unconfigured resources and unknown paths - is reverse-proxied
// to the cloud with the daemon's credentials, or answered 503 with a
// Retry-After while the cloud cannot be reached.
//
// The request and response semantics follow kube-apiserver: query parameters
// are decoded and validated with apimachinery's ListOptions machinery,
// every error is a metav1.Status built with k8s.io/apimachinery/pkg/api/errors,
// lists are {"kind":"<Kind>List",...} bodies concatenated from the cached
// objects' JSON, and watches stream newline-delimited JSON frames shared by
// every watcher, with bookmarks on request.
//
// Files are named by what they do: router.go wires the routes, resolve.go
// maps a path to a cached resource, options.go parses query parameters,
// get.go, list.go and watch.go serve reads, wait.go waits for a too large
// resourceVersion, proxy.go forwards to the cloud, discovery.go and
// health.go serve the non-resource endpoints (aggregated.go the aggregated
// discovery documents, version.go /version), negotiate.go checks Accept and
// mediatype.go picks a conversion (Table, aggregated discovery) from it,
// table.go renders kubectl's Tables with the columns of subpackage printers, and
// status.go and recover.go write errors; continue.go reads and writes
// kube's continue tokens and fieldlabels.go checks field selectors per kind.
//
// Paging follows kube-apiserver's watch cache: a page with limit is listed
// at one RV, its continue token carries that RV and the next key, and later
// pages are listed exactly at that RV (see versioncache.Cache.ListPage).
//
// protobuf.go serves built-in kinds in protobuf when the Accept header
// prefers it, reusing each object's and each event's encoding; custom
// resources are JSON only, as in kube-apiserver.
//
// Known gaps: Tables are JSON only; exact lists and continue tokens are served only back to the event ring's
// floor (older ones get kube's 410); the deprecated /api/v1/watch/... paths
// are proxied.
package listwatch
