// Package printers holds kube-apiserver's Table columns and row cells per
// resource (kube's pkg/printers/internalversion), computed from an object's
// raw JSON. It knows nothing of HTTP or the cache: pkg/listwatch builds
// Tables from what For returns.
package printers
