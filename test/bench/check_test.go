//go:build e2e

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// soundResults returns results that pass check for a one-round, one-step
// configuration.
func soundResults() *results {
	cfg := smokeConfig()
	side := listResult{rawJSON: time.Millisecond, rawProto: time.Millisecond, typedJSON: time.Millisecond,
		typedProto: time.Millisecond, typedJSONFloor: time.Millisecond, typedProtoFloor: time.Millisecond,
		bytesJSON: 1, items: cfg.Pods}
	watch := watchResult{p50: time.Millisecond, p99: 2 * time.Millisecond, delivered: 10, want: 10}
	mem := Memory{RSS: MiB, HWM: MiB}
	return &results{
		cfg: cfg,
		steps: []stepResult{{objects: cfg.Objects(), lite: mem, kube: mem, etcd: mem, heldJSON: 1,
			sync:      syncResult{took: time.Second, objects: cfg.Objects(), linkBytes: 1, dbBytes: 1, cpu: time.Second},
			coldStart: coldTimes{serving: time.Second, full: time.Second}}},
		rounds: []roundResult{{list: [2]listResult{side, side}, informer: [2]time.Duration{1, 1}, informerFloor: [2]time.Duration{1, 1},
			informerItems: [2]int{cfg.Pods, cfg.Pods}, watch: [2]watchResult{watch, watch}, linkPerEvent: 1}},
		peakLite: mem, peakKube: mem, peakEtcd: mem,
		coldOnline: coldTimes{serving: 1}, coldOffline: coldTimes{serving: 1},
		profiles: "none", cloudList: time.Second,
		relist: relistResult{linkBytes: 2, startBytes: 1, fullProto: 10, fullJSON: 10, protoBodies: 40, leanPods: true, leanConfigMaps: true},
	}
}

// TestCheck shows that the smoke run's check fails on the faults it is
// there to catch.
func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *results)
		want   string
	}{
		{"sound", func(*results) {}, ""},
		{"servers list different pods", func(r *results) { r.rounds[0].list[LiteSide].items-- }, "listed"},
		{"informer short", func(r *results) { r.rounds[0].informerItems[KubeSide] = 0 }, "informer holds"},
		{"watcher missed an event", func(r *results) { r.rounds[0].watch[LiteSide].delivered-- }, "delivered"},
		{"no LIST time", func(r *results) { r.rounds[0].list[KubeSide].rawProto = 0 }, "figure missing"},
		{"no link bytes", func(r *results) { r.rounds[0].linkPerEvent = 0 }, "link bytes"},
		{"no cold start", func(r *results) { r.coldOffline.serving = 0 }, "cold start"},
		{"round missing", func(r *results) { r.rounds = nil }, "rounds"},
		{"no sync CPU", func(r *results) { r.steps[0].sync.cpu = 0 }, "sync"},
		{"no client floor", func(r *results) { r.rounds[0].informerFloor[LiteSide] = 0 }, "figure missing"},
		{"relist not lean", func(r *results) { r.relist.leanPods = false }, "relist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := soundResults()
			tt.mutate(r)
			errs := r.check()
			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}
			joined := strings.Join(got, "\n")
			if tt.want == "" && len(errs) > 0 {
				t.Fatalf("got errors %q, want none", joined)
			}
			if tt.want != "" && !strings.Contains(joined, tt.want) {
				t.Fatalf("got errors %q, want one containing %q", joined, tt.want)
			}
		})
	}
}

func TestEventSeq(t *testing.T) {
	tests := []struct {
		ev     string
		want   int
		wantOK bool
	}{
		{`{"type":"MODIFIED","object":{"metadata":{"annotations":{"` + SeqAnnotation + `":"42"}}}}`, 42, true},
		{`{"type":"MODIFIED","object":{"metadata":{}}}`, 0, false},
		{`{"object":{"metadata":{"annotations":{"` + SeqAnnotation + `":"x"}}}}`, 0, false},
		{`{"object":{"metadata":{"annotations":{"` + SeqAnnotation + `":"4`, 0, false},
	}
	for _, tt := range tests {
		got, ok := eventSeq([]byte(tt.ev))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("eventSeq(%s): got %d, %v, want %d, %v", tt.ev, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestWriteReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := writeReport(path, []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	doc := "intro\n" + string(data) + "outro\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(path, []byte("second\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "intro\n# Benchmarks\n\n" + beginMarker + "\nsecond\n" + endMarker + "\noutro\n"
	if string(got) != want {
		t.Errorf("report: got %q, want %q", got, want)
	}
}

func TestProcStat(t *testing.T) {
	m, err := ReadMemory(os.Getpid())
	if err != nil || m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("readMemory(self): got %+v, %v, want RSS > 0 and HWM >= RSS", m, err)
	}
	if _, err := ReadCPU(os.Getpid()); err != nil {
		t.Errorf("readCPU(self): %v", err)
	}
	if _, err := ReadCPU(-1); err == nil {
		t.Error("readCPU(-1): got no error")
	}
}

func TestEventRV(t *testing.T) {
	tests := []struct {
		ev     string
		want   string
		wantOK bool
	}{
		{`{"type":"MODIFIED","object":{"metadata":{"name":"p","resourceVersion":"42"}}}`, "42", true},
		{`{"type":"MODIFIED","object":{"metadata":{"resourceVersion":"7","annotations":{"a":"\"resourceVersion\":\"9\""}}}}`, "7", true},
		{`{"type":"ERROR","object":{"kind":"Status"}}`, "", false},
		{`{"type":"MODIFIED","object":{"metadata":{"resourceVersion":""}}}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.ev, func(t *testing.T) {
			got, ok := eventRV([]byte(tt.ev))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %q, %v, want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
