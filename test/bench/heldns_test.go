//go:build e2e

package bench

import (
	"bytes"
	"errors"
	"math"
	"os"
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
