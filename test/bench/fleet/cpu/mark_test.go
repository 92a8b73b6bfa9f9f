//go:build e2e

package cpu

import (
	"fmt"
	"testing"
	"time"
)

// TestParseMachineCPU reads the machine's busy and total ticks.
func TestParseMachineCPU(t *testing.T) {
	stat := "cpu  100 10 50 800 40 5 5 0 30 0\ncpu0 50 5 25 400 20 2 3 0 15 0\nintr 1\n"
	busy, all, err := parseMachine([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	// busy: user, nice, system, irq, softirq, steal; all adds idle and iowait.
	if want := 1700 * time.Millisecond; busy != want {
		t.Errorf("busy: got %v, want %v", busy, want)
	}
	if want := 10100 * time.Millisecond; all != want {
		t.Errorf("all: got %v, want %v", all, want)
	}
	for _, bad := range []string{"cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3\n", "cpu 1 2 3 x 5 6 7 8\n", "cpu 1 2 3 -4 5 6 7 8\n"} {
		if _, _, err := parseMachine([]byte(bad)); err == nil {
			t.Errorf("parseMachine(%q): got no error, want one", bad)
		}
	}
}

// TestSharesBetween: cores used between two marks, and what the listed
// processes leave of the machine's busy time.
func TestSharesBetween(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Mark{At: t0, API: 10 * time.Second, Busy: 100 * time.Second, All: 200 * time.Second}
	b := Mark{At: t0.Add(2 * time.Second), Daemons: time.Second, API: 12 * time.Second, Etcd: 500 * time.Millisecond,
		Bench: 500 * time.Millisecond, Busy: 104.8 * 1e9, All: 204 * time.Second}
	got := Between(a, b)
	want := Shares{Elapsed: 2 * time.Second, Daemons: 0.5, API: 1, Etcd: 0.25, Bench: 0.25, Others: 0.4, Busy: 2.4, Cores: 2}
	if fmt.Sprintf("%.3f", []float64{got.Daemons, got.API, got.Etcd, got.Bench, got.Others, got.Busy, got.Cores}) !=
		fmt.Sprintf("%.3f", []float64{want.Daemons, want.API, want.Etcd, want.Bench, want.Others, want.Busy, want.Cores}) || got.Elapsed != want.Elapsed {
		t.Errorf("Between: got %+v, want %+v", got, want)
	}
	if got := Between(b, b); got != (Shares{}) {
		t.Errorf("Between of one moment: got %+v, want nothing", got)
	}
}

// FuzzParseMachineCPU: the daemon restart's parser of /proc/stat never
// panics.
func FuzzParseMachineCPU(f *testing.F) {
	f.Add([]byte("cpu  100 10 50 800 40 5 5 0 30 0\n"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _, _ = parseMachine(data)
	})
}
