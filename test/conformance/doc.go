// Package conformance is a differential conformance suite: every case is one
// row of a table, run against both the real kube-apiserver (as the cluster
// admin) and apiserver-lite (its local HTTP API) of one test cluster from
// test/e2e/framework, and the two answers are compared.
//
// # What is compared
//
// A request row is one HTTP request (method, path, query, Accept header).
// Both answers are reduced to what a client can rely on: the status code,
// the media type, the Status reason and cause types (and fields) of errors,
// and for objects and lists the kind and every object in full (identity
// namespace/name/uid, resourceVersion, labels, data, managedFields ...).
// What legitimately differs is normalized away, and only that:
//
//   - A list's own resourceVersion is not compared by value. kube-apiserver
//     answers etcd's global revision; apiserver-lite answers the cloud RV its
//     copy of that resource has caught up to. Both are checked to be at least
//     the newest item's RV, the edge's to be at most the cloud's, and the
//     watch rows check the meaning: a watch from each side's list RV delivers
//     exactly the changes made after the list, with the same event types,
//     order, object identities and RVs.
//   - Status messages are logged, not compared: they carry RVs and wording.
//   - Timing: a too-large resourceVersion is answered after a wait on both
//     sides; bookmark timing is not compared, only their shape.
//
// Before every comparison the suite waits until apiserver-lite has caught up
// to the cloud RV of the last write the suite made to that resource (every
// write goes through one helper that records its RV), so both sides answer
// from the same state.
//
// Watch rows open the same watch on both sides, then make the row's changes
// through the cloud and compare the frames. kubectl rows run the built
// kubectl against both. Informer rows run a client-go informer in a child
// process (this test binary, re-executed) with WatchListClient on or off and
// KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true, and compare the synced keys
// and RVs and whether client-go's consistency check ran or fired.
//
// # Known differences
//
// A row whose answers differ today because a feature is not (yet) built in
// apiserver-lite is neither failed nor skipped: it carries knownDifference,
// the justification, and differsIn, the aspect that differs. Such a row
// passes only while that aspect STILL differs and every other aspect is
// equal. When the feature lands the row fails: then remove knownDifference
// (and differsIn) from the row, so it guards the new behaviour, and
// regenerate the compatibility table.
//
// # Running
//
// It uses the binaries and environment variables of test/e2e (see the
// framework's doc):
//
//	export APISERVER_LITE_TOOLS_BIN="$(test/tools/build.sh)"
//	go test -tags e2e -count=1 ./test/conformance/...
//
// docs/compatibility/conformance.md is generated from the table; a test
// fails when it is stale. Regenerate it with:
//
//	CONFORMANCE_UPDATE_DOCS=1 go test -tags e2e -count=1 -run TestConformanceDoc ./test/conformance/
package conformance
