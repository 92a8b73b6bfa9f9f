package versioncache

import "sort"

// ring is a bounded FIFO of applied events in RV order. When full, push
// evicts the oldest. A ring is not safe for concurrent use; Cache.mu guards
// it. Always: 0 <= n <= len(buf), and the events at(0..n-1) have
// non-decreasing RVs.
type ring struct {
	buf   []Event // fixed length: the capacity
	start int     // index in buf of the oldest event
	n     int     // number of events held
}

func newRing(capacity int) ring {
	return ring{buf: make([]Event, capacity)}
}

func (r *ring) len() int { return r.n }

// at returns the i-th oldest event, 0 <= i < r.len().
func (r *ring) at(i int) *Event {
	return &r.buf[(r.start+i)%len(r.buf)]
}

// push appends e. If the oldest event was evicted for it, push returns
// that event's RV and true.
func (r *ring) push(e Event) (evictedRV uint64, evicted bool) {
	if r.n < len(r.buf) {
		*r.at(r.n) = e
		r.n++
		return 0, false
	}
	evictedRV = r.buf[r.start].RV
	r.buf[r.start] = e
	r.start = (r.start + 1) % len(r.buf)
	return evictedRV, true
}

// firstAfter returns the index of the oldest event with an RV above rv, or
// r.len() if there is none.
func (r *ring) firstAfter(rv uint64) int {
	return sort.Search(r.n, func(i int) bool { return r.at(i).RV > rv })
}

// reset empties the ring and drops its references to objects.
func (r *ring) reset() {
	clear(r.buf)
	r.start, r.n = 0, 0
}
