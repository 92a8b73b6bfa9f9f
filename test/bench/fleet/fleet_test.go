//go:build e2e

package fleet

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/change"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/cpu"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
)

// TestBenchFleet is `make bench-fleet`: the fleet run, written to the
// Markdown file BENCH_FLEET_REPORT names.
func TestBenchFleet(t *testing.T) {
	report := os.Getenv(envFleetReport)
	if report == "" {
		t.Skipf("%s is unset; run make bench-fleet", envFleetReport)
	}
	cfg, err := fleetConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	r := runFleet(t, cfg)
	var b bytes.Buffer
	r.writeMarkdown(&b)
	t.Logf("\n%s", b.String())
	if err := os.WriteFile(report, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(r.check()...); err != nil {
		t.Errorf("the run produced unsound figures:\n%v", err)
	}
}

// TestBenchFleetSmoke runs the fleet on three nodes for one short round
// and fails when a figure is missing or a node does not catch up.
func TestBenchFleetSmoke(t *testing.T) {
	r := runFleet(t, fleetSmokeConfig())
	var b bytes.Buffer
	r.writeMarkdown(&b)
	t.Logf("\n%s", b.String())
	if err := errors.Join(r.check()...); err != nil {
		t.Errorf("the fleet smoke run produced unsound figures:\n%v", err)
	}
	if exit := r.reboot.phases.slowestExit; exit >= maxSmokeDaemonExit {
		t.Errorf("a daemon took %s from SIGTERM to exit, want under %s: its doors kept an idle HTTP/2 connection open for net/http's GOAWAY timeout",
			exit, maxSmokeDaemonExit)
	}
}

// maxSmokeDaemonExit bounds one smoke daemon's SIGTERM to exit: a door
// that waited out net/http's one-second HTTP/2 GOAWAY timeout on its idle
// Lease renewal connection exits no sooner; a drained one in about 0.1 s.
const maxSmokeDaemonExit = time.Second

// wantInReport fails t for each of wants r's report does not contain.
func wantInReport(t *testing.T, r *fleetResults, wants ...string) {
	t.Helper()
	var b bytes.Buffer
	r.writeMarkdown(&b)
	for _, w := range wants {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report: got\n%s\nwant it to contain %q", b.String(), w)
		}
	}
}

// soundFleet returns fleet results that pass check.
func soundFleet() *fleetResults {
	side := sideCost{perMin: map[string]float64{"update leases": 18, "watch pods": 1}, watches: 10,
		apiCPU: time.Second, apiRSS: bench.MiB, etcRSS: bench.MiB, apiWrites: 1}
	restart := restartResult{caughtUp: time.Second, requests: 10, bytes: cloudBytes{list: bench.MiB}, cpuPeak: 1, profileCum: "cum"}
	return &fleetResults{cfg: fleetSmokeConfig(), lite: side, direct: side, rounds: []fleetRound{{lite: side, direct: side}},
		profileTop: [2]string{"flat", "flat"}, cloudRestart: restart, directRestart: restart, reboot: restart,
		rebootWindow: soundRebootWindow()}
}

// soundRebootWindow returns a daemon restart's window that passes check:
// three CPU marks a second apart, the change made 0.5 s after the first
// SIGTERM, and a profile.
func soundRebootWindow() rebootWindow {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	marks := []cpu.Mark{{At: t0}, {At: t0.Add(time.Second), Daemons: time.Second, Busy: time.Second, All: 2 * time.Second},
		{At: t0.Add(2 * time.Second), Daemons: 2 * time.Second, Busy: 2 * time.Second, All: 4 * time.Second}}
	return rebootWindow{marks: marks, change: change.Summary{Creates: 3, LastAnswered: 500 * time.Millisecond},
		createLevels: []string{"exempt"}, profileTop: "flat", profileCum: "cum"}
}

// TestFleetCheck shows that the smoke run's check fails on the faults it
// is there to catch.
func TestFleetCheck(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(r *fleetResults)
		want   string
	}{
		{"sound", func(*fleetResults) {}, ""},
		{"no lease renewals", func(r *fleetResults) { delete(r.lite.perMin, "update leases") }, "Lease"},
		{"no watches", func(r *fleetResults) { r.direct.watches = 0 }, "open watches"},
		{"no CPU", func(r *fleetResults) { r.lite.apiCPU = 0 }, "CPU"},
		{"no write calls", func(r *fleetResults) { r.direct.apiWrites = 0 }, "write calls"},
		{"no catch-up", func(r *fleetResults) { r.reboot.caughtUp = 0 }, "catch-up"},
		{"Lease renewal failed across the daemon restart", func(r *fleetResults) {
			r.enterPhase(lease.DaemonRestart)
			r.leaseFails[bench.LiteSide].Add(1)
		}, "failed Lease renewals across the daemon restart"},
		{"Lease renewals failed in the other phases", func(r *fleetResults) {
			for _, p := range []lease.Phase{lease.Steady, lease.CloudRestart} {
				r.enterPhase(p)
				r.leaseFails[bench.LiteSide].Add(1)
				r.leaseFails[bench.KubeSide].Add(1)
			}
		}, ""},
		{"round missing", func(r *fleetResults) { r.rounds = nil }, "rounds measured"},
		{"no direct profile", func(r *fleetResults) { r.profileTop[bench.KubeSide] = "" }, "profile"},
		{"direct cloud restart not caught up", func(r *fleetResults) { r.directRestart.caughtUp = 0 }, "cloud restart"},
		{"stopped", func(r *fleetResults) { r.stopped = errors.New("node fleet-001 serves 3 pods, want 4") }, "stopped"},
		{"restart lists a collection", func(r *fleetResults) { r.rebootLists.collection = 1 }, "1 collection LISTs"},
		{"restart lists an object", func(r *fleetResults) { r.rebootLists.single = 2 }, "2 single-object LISTs"},
		{"restart streams an object", func(r *fleetResults) { r.rebootLists.streams = 3 }, "3 streaming watches"},
		{"daemon restart's CPU not marked", func(r *fleetResults) { r.rebootWindow.marks = r.rebootWindow.marks[:1] }, "1 CPU marks"},
		{"daemon restart's change failed", func(r *fleetResults) {
			r.rebootWindow.change.Failed, r.rebootWindow.change.FirstErr = 1, errors.New("create pod fleet-001-d: etcdserver: request timed out")
		}, "1 of the change's 3 creates failed"},
		{"daemon restart's change never answered", func(r *fleetResults) { r.rebootWindow.change.LastAnswered = 0 }, "never answered"},
		{"cloud restart not profiled", func(r *fleetResults) { r.directRestart.profileCum = "" }, "CPU profile of the cloud restart"},
		{"daemon restart not profiled", func(r *fleetResults) { r.rebootWindow.profileCum = "" }, "CPU profile of the daemon restart"},
		{"daemon restart's figure not read", func(r *fleetResults) { r.rebootWindow.errs = []error{errors.New("cloud metrics: EOF")} }, "cloud metrics: EOF"},
		{"restart checks twice", func(r *fleetResults) {
			r.rebootLists.maxChecks, r.rebootLists.maxChecksOf = 2, "system:node:fleet-000 pods, nodes"
		}, "2 limit=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := soundFleet()
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
