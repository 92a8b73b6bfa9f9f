package gcheadroom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name       string
		configured int
		headroom   uint64
		base       uint64
		want       int
	}{
		{"no cycle yet: the runtime's minimum is the headroom", 25, 8 * mib, 0, 200},
		{"small heap: raised for the headroom", 25, 8 * mib, 5 * mib, 160},
		{"rounded up", 25, 8 * mib, 3 * mib, 200},
		{"tiny heap: no further than the runtime's minimum", 25, 8 * mib, 1 * mib, 200},
		{"large heap: the configured percent", 25, 8 * mib, 64 * mib, 25},
		{"where the percent alone gives the headroom", 25, 8 * mib, 32 * mib, 25},
		{"configured above what the headroom asks", 300, 8 * mib, 5 * mib, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentFor(tt.configured, tt.headroom, tt.base); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// runtimePercent is the runtime's GC percent now.
func runtimePercent(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// waitPercent collects until the runtime's percent is want.
func waitPercent(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtimePercent(t) != want {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent: got %d, want %d", runtimePercent(t), want)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTunerFollowsTheLiveHeap: a small heap gets the headroom's percent,
// a heap grown past it the configured one after the next cycles, and Stop
// puts the configured percent back.
func TestTunerFollowsTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	const configured, headroom = 25, 16 << 20

	tuner := Start(configured, headroom)
	defer tuner.Stop()
	runtime.GC()
	if got := tuner.Percent(); got <= configured {
		t.Fatalf("small heap: got percent %d, want above %d", got, configured)
	}
	waitPercent(t, tuner.Percent())

	held := make([][]byte, 0, 12)
	for range cap(held) {
		held = append(held, make([]byte, 8<<20)) // 96 MiB live: 25% is 24 MiB
	}
	waitPercent(t, configured)
	runtime.KeepAlive(held)
	held = nil

	waitPercent(t, headroom*100/heapMinimumAt100) // empty again: the most it raises
	tuner.Stop()
	if got := runtimePercent(t); got != configured {
		t.Errorf("after Stop: got percent %d, want %d", got, configured)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := runtimePercent(t); got != configured {
		t.Errorf("a cycle after Stop: got percent %d, want %d", got, configured)
	}
}
