// Package listwatch serves the node-local, Kubernetes-compatible HTTP API.
//
// Reads (get, list, watch) of the configured resources are answered from
// memory by pkg/versioncache, so kubelet, client-go and kubectl keep working
// while the cloud kube-apiserver is unreachable. Everything else - writes,
// subresources, unconfigured resources, unknown paths, and reads wider than
// the synced scope - is reverse-proxied to the cloud with the daemon's
// credentials, or answered 503 with a Retry-After while the cloud cannot be
// reached.
//
// The request and response semantics follow kube-apiserver: query
// parameters are decoded and validated with apimachinery's ListOptions
// machinery, every error is a metav1.Status built with
// k8s.io/apimachinery/pkg/api/errors, lists are concatenated from the
// cached objects' encodings, and watches stream frames shared by every
// watcher, with bookmarks on request.
//
// Folders are layers, lowest first; no package imports one above it:
//
//   - response: Status errors, body writers, media types and the
//     Responder, the negotiated encoding every answer is written through.
//   - negotiate: reads Accept, Accept-Encoding and the Table options once
//     into a Responder (kube's handlers/negotiation).
//   - scope: decides whether a read lies within a resource's synced scope.
//   - printers: kube's Table columns and cells per resource.
//   - encode: cached objects to list bodies, protobuf, Tables, bookmarks
//     and continue tokens.
//   - proxy: the cloud reverse proxy and the RV a proxied write returned.
//   - discovery: /api, /apis (legacy and aggregated) and /version.
//   - this package, on top: the handlers and the router, which own the
//     server state and wire the others together.
//
// Here files are named by what they do: router.go wires the routes,
// resolve.go maps a path to a cached resource, route.go decides once per
// read whether it is answered from the cache, by the cloud or refused,
// and why (decide; every branch after it only carries the choice out),
// options.go parses query parameters, held.go tells reads outside the
// synced scope (offline a wider list or watch is 503 for every caller:
// only a Table may be the partial set, with a Warning), widen.go serves a pod identity's
// read from the whole copy of a resource the sync holds in part (the
// node's identity keeps the partial view),
// get.go, list.go, watch.go and watchlist.go serve reads, wait.go waits for
// a too large resourceVersion, writes.go forwards to the cloud and keeps
// read-your-writes,
// recover.go turns a panic into a 500, and fieldlabels.go checks field
// selectors per kind.
//
// Paging follows kube-apiserver's watch cache: a page with limit is listed
// at one RV, its continue token carries that RV and the next key, and later
// pages are listed exactly at that RV (see versioncache.Cache.ListPage).
//
// Known gaps: exact lists and continue tokens are served only back to the
// event ring's floor (older ones get kube's 410); the deprecated
// /api/v1/watch/... paths are proxied.
package listwatch
