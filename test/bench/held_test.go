//go:build e2e

package bench

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBenchHeld is make bench's held-for-pods part: what holding
// EndpointSlices for the node's pods costs apiserver-lite and the cloud,
// beside the same components reading the cloud directly. It writes its
// own section of the Markdown file BENCH_REPORT names.
func TestBenchHeld(t *testing.T) {
	report := os.Getenv(envReport)
	if report == "" {
		t.Skipf("%s is unset; run make bench", envReport)
	}
	cfg, err := heldConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	r := runHeld(t, cfg)
	var b bytes.Buffer
	r.writeMarkdown(&b)
	t.Logf("\n%s", b.String())
	if err := writeSection(report, heldBeginMarker, heldEndMarker, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(r.check()...); err != nil {
		t.Errorf("the run produced unsound figures:\n%v", err)
	}
}

// TestBenchHeldSmoke runs the held-for-pods benchmark on 20 services and
// EndpointSlices with windows of a few seconds, and fails when a figure
// is missing, a component does not hold the data set or misses an update,
// or nothing was held.
func TestBenchHeldSmoke(t *testing.T) {
	r := runHeld(t, heldSmokeConfig())
	var b bytes.Buffer
	r.writeMarkdown(&b)
	out := b.String()
	t.Logf("\n%s", out)
	if err := errors.Join(r.check()...); err != nil {
		t.Errorf("the held smoke run produced unsound figures:\n%v", err)
	}
	for _, want := range []string{"live Go heap", "bytes an object", "open watches at the cloud", "window: kube-apiserver CPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"NaN", "Inf", "%!"} {
		if strings.Contains(out, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
}

// soundHeld returns held results that pass check.
func soundHeld() *heldResults {
	mem := heldMemory{Memory: Memory{RSS: MiB, HWM: MiB}, heap: MiB, disk: MiB}
	side := func(readers int) heldSide {
		return heldSide{readers: readers, synced: time.Second, start: map[string]int{"watch endpointslices": 1},
			perMin: map[string]float64{}, watches: 1, apiCPU: time.Second, apiRSS: MiB, lite: mem,
			updates: 5, delivered: true, holds: [2]int{21, 20}}
	}
	return &heldResults{cfg: heldSmokeConfig(), services: 21, slices: 20, base: mem, afterSync: mem, heldResources: 1,
		lite: []heldSide{side(1), side(heldReaders)}, direct: []heldSide{side(1), side(heldReaders)}}
}

// TestHeldCheck shows that the smoke run's check fails on the faults it
// is there to catch.
func TestHeldCheck(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(r *heldResults)
		want   string
	}{
		{"sound", func(*heldResults) {}, ""},
		{"no cloud watch", func(r *heldResults) { r.lite[0].start = map[string]int{} }, "nothing held"},
		{"forwarded, not held", func(r *heldResults) { r.heldResources = 0 }, "nothing held"},
		{"no heap", func(r *heldResults) { r.afterSync.heap = 0 }, "figure missing"},
		{"no watches", func(r *heldResults) { r.direct[1].watches = 0 }, "open watches"},
		{"update missed", func(r *heldResults) { r.lite[1].delivered = false }, "saw them: false"},
		{"short store", func(r *heldResults) { r.direct[0].holds[1] = 19 }, "19 EndpointSlices"},
		{"window missing", func(r *heldResults) { r.direct = r.direct[:1] }, "windows"},
		{"stopped", func(r *heldResults) { r.stopped = errors.New("seed: boom") }, "stopped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := soundHeld()
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

// TestWriteSection replaces the held section between its markers, leaves
// the rest alone, and appends it to a report without them.
func TestWriteSection(t *testing.T) {
	path := t.TempDir() + "/b.md"
	if err := os.WriteFile(path, []byte("# B\n\n"+beginMarker+"\nmain\n"+endMarker+"\ntail\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"one\n", "two\n"} {
		if err := writeSection(path, heldBeginMarker, heldEndMarker, []byte(section)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# B\n\n" + beginMarker + "\nmain\n" + endMarker + "\ntail\n\n" + heldBeginMarker + "\ntwo\n" + heldEndMarker + "\n"
	if string(got) != want {
		t.Errorf("report: got %q, want %q", got, want)
	}
}

// TestParseHeapAlloc reads HeapAlloc from a heap profile's text trailer.
func TestParseHeapAlloc(t *testing.T) {
	got, err := parseHeapAlloc(strings.NewReader("heap profile: 1: 2 [3: 4] @ heap/1048576\n\n# runtime.MemStats\n# Alloc = 123\n# HeapAlloc = 4567\n"))
	if err != nil || got != 4567 {
		t.Errorf("parseHeapAlloc: got %d, %v, want 4567", got, err)
	}
	if _, err := parseHeapAlloc(strings.NewReader("# Alloc = 1\n")); err == nil {
		t.Errorf("parseHeapAlloc without HeapAlloc: got no error, want one")
	}
}
