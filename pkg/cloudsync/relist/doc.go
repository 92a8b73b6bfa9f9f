// Package relist plans and reads a lean relist: the stored keys compared
// with the cloud's metadata list (Compare), and the new and changed
// objects read one by one at exactly the list's resourceVersion (Fetch),
// or, where a namespace holds many of them and few others, with one list
// of that namespace at the same resourceVersion (FetchPlan), when the
// source can list a namespace (NamespaceLister).
// The syncer commits and publishes what it returns as a full list's diff.
//
// Invariant: a plan never mixes two moments of the cloud. Anything that
// contradicts the list (a list behind the watermark, an object back with
// another UID at a version the watermark covers, a read that is not the
// listed state) is ErrFallback, and the full list, one consistent
// snapshot, is used instead.
package relist
