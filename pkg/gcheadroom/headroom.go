package gcheadroom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapMinimumAt100 is the Go runtime's minimum heap goal at GC percent
// 100, in bytes; the runtime scales it with the percent. The raised
// percent stops where that minimum reaches the headroom: on an almost
// empty heap the headroom alone would ask for thousands of percent, and a
// minimum that large would let the heap grow far past the headroom before
// the first cycle.
const heapMinimumAt100 = 4 << 20

// The runtime's own measure of what a cycle scans: the goal is the marked
// heap plus the percent of the marked heap, stacks and globals.
const (
	metricLive    = "/gc/heap/live:bytes"
	metricStacks  = "/gc/scan/stack:bytes"
	metricGlobals = "/gc/scan/globals:bytes"
)

// Tuner raises the GC percent on small heaps; see the package comment.
type Tuner struct {
	percent  int    // the configured percent, positive
	headroom uint64 // bytes the goal keeps above the live heap, at least

	// samples is read by adjust alone: in Start, then only on the
	// runtime's cleanup goroutine.
	samples []metrics.Sample

	mu      sync.Mutex
	stopped bool // guarded by mu
	current int  // the percent last set; guarded by mu
}

// Start sets the GC percent to percent raised for headroom, and keeps
// adjusting it after every GC cycle until Stop. percent must be positive
// (an off collector has no goal to keep headroom in).
func Start(percent int, headroom uint64) *Tuner {
	t := &Tuner{percent: percent, headroom: headroom, samples: []metrics.Sample{
		{Name: metricLive}, {Name: metricStacks}, {Name: metricGlobals}}}
	t.adjust()
	t.arm()
	return t
}

// Stop ends the adjustments and puts the configured percent back.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		t.setLocked(t.percent)
	}
}

// Percent is the GC percent the tuner last set.
func (t *Tuner) Percent() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}

// setLocked sets the runtime's percent to p unless it is already p.
func (t *Tuner) setLocked(p int) {
	if p != t.current {
		debug.SetGCPercent(p)
		t.current = p
	}
}

// sentinel is dropped at once; its cleanup runs after the cycle that
// found it unreachable. Its size keeps it out of the tiny allocator, whose
// blocks are shared and so freed late.
type sentinel [16]uint64

// arm attaches the next adjustment to the next cycle.
func (t *Tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *Tuner) {
		if t.adjust() {
			t.arm()
		}
	}, t)
}

// adjust sets the percent that gives the headroom on the last cycle's
// live heap, never below the configured one; false once stopped.
func (t *Tuner) adjust() bool {
	metrics.Read(t.samples)
	var base uint64
	for _, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			base += s.Value.Uint64()
		}
	}
	p := percentFor(t.percent, t.headroom, base)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	t.setLocked(p)
	return true
}

// percentFor is the least percent at or above configured that makes
// base×percent/100 at least headroom, but no more than the percent at
// which the runtime's minimum heap goal is the headroom.
func percentFor(configured int, headroom, base uint64) int {
	need := headroom * 100 / heapMinimumAt100
	if base > 0 {
		need = min(need, (headroom*100+base-1)/base)
	}
	return max(configured, int(need))
}
