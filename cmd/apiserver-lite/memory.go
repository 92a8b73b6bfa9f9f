package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
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

// applyMemorySettings sets the Go runtime's soft memory limit and GC
// percent from c (already validated) and the environment, and logs them.
func applyMemorySettings(c config, log *slog.Logger) {
	if limit, _ := c.memoryLimit(); limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "bytes", limit)
	}
	_, gogc := os.LookupEnv("GOGC")
	if p, ok := c.gcPercent(gogc); ok {
		debug.SetGCPercent(p)
		log.Info("gc percent", "percent", p)
	}
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
