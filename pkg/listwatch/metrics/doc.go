// Package metrics holds apiserver-lite's Prometheus metrics: the sync
// loops' progress (fed through cloudsync.Observer), the local caches'
// figures (read at scrape time), the cloud link and the local API's
// requests. It imports nothing of the project, so every layer can be
// observed without importing upward; cmd wires it.
//
// Names follow kube-apiserver's (apiserver_*) where the meaning is the
// same; the rest are apiserver_lite_*.
package metrics
