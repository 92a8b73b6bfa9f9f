//go:build e2e

package bench

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// TestBenchHeldNamespace is make bench's namespaced part: what holding
// BENCH_SCALE times 1,000 ConfigMaps in one namespace for an operator
// costs apiserver-lite and the cloud, beside the same informer reading the
// cloud directly. It writes its own section of the report.
func TestBenchHeldNamespace(t *testing.T) {
	report := os.Getenv(envReport)
	if report == "" {
		t.Skipf("%s is unset; run make bench", envReport)
	}
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	n := int(math.Max(1, math.Round(nsBaseConfigMaps*float64(cfg.Pods)/basePods)))
	m := readMachine()
	r := runHeldNamespace(t, n)
	var b bytes.Buffer
	r.writeMarkdown(&b, m)
	t.Logf("\n%s", b.String())
	if err := writeSection(report, nsBeginMarker, nsEndMarker, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(r.check()...); err != nil {
		t.Errorf("the run produced unsound figures:\n%v", err)
	}
}

// TestBenchHeldNamespaceSmoke runs it on 20 ConfigMaps and fails when a
// figure is missing, an informer does not hold them all, or nothing was
// held.
func TestBenchHeldNamespaceSmoke(t *testing.T) {
	r := runHeldNamespace(t, 20)
	var b bytes.Buffer
	r.writeMarkdown(&b, readMachine())
	t.Logf("\n%s", b.String())
	if err := errors.Join(r.check()...); err != nil {
		t.Errorf("the smoke run produced unsound figures:\n%v", err)
	}
}

// TestHeldNamespaceCheck shows that the smoke run's check fails on the
// faults it is there to catch.
func TestHeldNamespaceCheck(t *testing.T) {
	sound := func() *nsResults {
		mem := heldMemory{memory: memory{RSS: mib}, heap: mib, disk: mib}
		return &nsResults{configMaps: 20, base: mem, afterSync: mem, throughHolds: 21, againHolds: 21, directHolds: 21,
			throughCloud: map[string]int{"watch configmaps": 1}, directCloud: map[string]int{"watch configmaps": 1}}
	}
	for _, tt := range []struct {
		name   string
		mutate func(r *nsResults)
		want   string
	}{
		{"sound", func(*nsResults) {}, ""},
		{"forwarded, not held", func(r *nsResults) { r.throughCloud = map[string]int{} }, "nothing held"},
		{"short informer", func(r *nsResults) { r.againHolds = 20 }, "held 20 ConfigMaps"},
		{"no heap", func(r *nsResults) { r.afterSync.heap = 0 }, "memory figure"},
		{"stopped", func(r *nsResults) { r.stopped = errors.New("seed: boom") }, "stopped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := sound()
			tt.mutate(r)
			err := errors.Join(r.check()...)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check: got %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("check: got %v, want an error about %q", err, tt.want)
			}
		})
	}
}
