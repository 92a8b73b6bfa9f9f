//go:build e2e

package bench

import (
	"errors"
	"strings"
	"testing"
)

// TestBenchHeldNamespace is make bench's namespaced part: what holding
// BENCH_SCALE times 1,000 ConfigMaps in one namespace for an operator
// costs apiserver-lite and the cloud, beside the same informer reading the
// cloud directly. It writes its own section of the report.
func TestBenchHeldNamespace(t *testing.T) { benchHeldOne(t, nsSpec, nsBaseConfigMaps) }

// TestBenchHeldNamespaceSmoke runs it on 20 ConfigMaps and fails when a
// figure is missing, an informer does not hold them all, or nothing was
// held.
func TestBenchHeldNamespaceSmoke(t *testing.T) { smokeHeldOne(t, nsSpec, 20) }

// TestHeldOneCheck shows that the smoke runs' check fails on the faults
// it is there to catch.
func TestHeldOneCheck(t *testing.T) {
	sound := func(spec *heldOneSpec) *heldOneResults {
		mem := heldMemory{Memory: Memory{RSS: MiB}, heap: MiB, disk: MiB}
		watch := map[string]int{"watch " + spec.resource: 1}
		return &heldOneResults{spec: spec, objects: 20, base: mem, afterSync: mem, throughHolds: 21, againHolds: 21, directHolds: 21,
			throughCloud: watch, againCloud: map[string]int{"create tokenreviews": 1}, directCloud: watch,
			readyz: "[+]held-for-pods:nodes@cluster ok: synced as kube-flannel/flannel (pod kube-flannel/x)"}
	}
	for _, tt := range []struct {
		name   string
		spec   *heldOneSpec
		mutate func(r *heldOneResults)
		want   string
	}{
		{"sound", nsSpec, func(*heldOneResults) {}, ""},
		{"sound nodes", nodesSpec, func(*heldOneResults) {}, ""},
		{"forwarded, not held", nsSpec, func(r *heldOneResults) { r.throughCloud = map[string]int{} }, "nothing held"},
		{"second sync forwarded", nodesSpec, func(r *heldOneResults) { r.againCloud = map[string]int{"watch nodes": 1} }, "not served from a holding"},
		{"not held for the agent", nodesSpec, func(r *heldOneResults) { r.readyz = "" }, "not held for the CNI agent"},
		{"short informer", nsSpec, func(r *heldOneResults) { r.againHolds = 20 }, "held 20 configmaps"},
		{"no heap", nsSpec, func(r *heldOneResults) { r.afterSync.heap = 0 }, "memory figure"},
		{"stopped", nsSpec, func(r *heldOneResults) { r.stopped = errors.New("seed: boom") }, "stopped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := sound(tt.spec)
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
