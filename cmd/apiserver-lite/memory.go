package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/apiserver-lite/apiserver-lite/pkg/gcheadroom"
)

// defaultGCPercent is the garbage collector's target heap growth, in
// percent of the live heap, when neither gc-percent nor GOGC is set. The
// live heap is mostly long-lived objects' bytes (noscan []byte blobs the
// collector marks without reading), so collecting at 25% growth instead of
// Go's 100% costs little mark work and keeps the heap, hence RSS, close to
// what is held (measured in docs/reliability.md, Memory).
const defaultGCPercent = 25

// gcOff is the gc-percent (and GOGC) value that turns the collector off.
const gcOff = -1

// gcHeadroom is the least the heap may grow above the live heap before a
// collection, in bytes, whatever gc-percent: at 25% a node's daemon, with
// about 5 MiB live, collected after every 1.3 MiB of allocation and spent
// a third of its start's CPU collecting (docs/reliability.md, Memory). A
// heap above 32 MiB live gets its headroom from gc-percent alone.
const gcHeadroom = 8 << 20

// applyMemorySettings sets the Go runtime's soft memory limit and GC
// percent from c (already validated) and the environment, and logs them;
// stop ends the GC percent's adjustment to the live heap.
func applyMemorySettings(c config, log *slog.Logger) (stop func()) {
	if limit, _ := c.memoryLimit(); limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "bytes", limit)
	}
	_, gogc := os.LookupEnv("GOGC")
	p, ok := c.gcPercent(gogc)
	if !ok {
		return func() {}
	}
	if p == gcOff {
		debug.SetGCPercent(p)
		log.Info("gc percent", "percent", p)
		return func() {}
	}
	log.Info("gc percent", "percent", p, "headroomBytes", gcHeadroom)
	return gcheadroom.Start(p, gcHeadroom).Stop
}

// gcPercent is the GC percent to set: gc-percent when given, else
// defaultGCPercent unless GOGC is set (envSet), which the runtime already
// applied; ok is false when the runtime's setting stays.
func (c config) gcPercent(envSet bool) (p int, ok bool) {
	switch {
	case c.GCPercent != 0:
		return c.GCPercent, true
	case envSet:
		return 0, false
	}
	return defaultGCPercent, true
}

// validateGCPercent checks gc-percent: 0 (unset), -1 (off) or positive.
func (c config) validateGCPercent() error {
	if c.GCPercent < gcOff {
		return fmt.Errorf("gc-percent must be a positive percentage, -1 (off) or 0 (default), got %d", c.GCPercent)
	}
	return nil
}
