// Package gcheadroom keeps the garbage collector's heap goal at least a
// fixed number of bytes above the live heap, while the GC percent alone
// would leave less.
//
// A low GC percent keeps a large heap close to what it holds, but on a
// small heap it makes the collector run after every few hundred KiB of
// allocation (Go's own 4 MiB heap minimum shrinks with the percent too),
// each cycle scanning the same stacks and globals: a daemon starting with a
// few MiB live then spends a third of its start collecting. After every
// cycle the package raises the percent just enough for the next goal to be
// at least the headroom above the live heap, and lowers it back to the
// configured percent once the heap has grown past the point where that
// percent gives the headroom on its own. So a heap of H live bytes is
// allowed max(H×percent/100, headroom) more, never less than the percent
// gives.
//
// It has no goroutine and no timer of its own: the adjustment runs on the
// runtime's cleanup goroutine, from a cleanup attached to an object
// dropped before each cycle. A soft memory limit, when set, still bounds
// the heap whatever the percent.
package gcheadroom
