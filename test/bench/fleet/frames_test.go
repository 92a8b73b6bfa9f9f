//go:build e2e

package fleet

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/direct"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/frames"
	"github.com/apiserver-lite/apiserver-lite/test/bench/fleet/lease"
	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Environment of TestBenchFrames.
const (
	// envFramesReport is a Markdown file to write the frame table to;
	// unset, it is only logged.
	envFramesReport = "BENCH_FRAMES_REPORT"
	// framesDebug must be in GODEBUG: golang.org/x/net/http2 then logs
	// every frame, and reads it once, when the process starts.
	framesDebug = "http2debug=2"
)

// TestBenchFrames counts the HTTP/2 frames of one node's cloud
// connections by type over a steady window, as their clients log them:
// the node's apiserver-lite with the kubelet's Lease renewals through its
// door, then the node's kubelet read set direct with the same renewals.
// Run by make bench-frames, which sets GODEBUG.
func TestBenchFrames(t *testing.T) {
	if !strings.Contains(os.Getenv("GODEBUG"), framesDebug) {
		t.Skip("GODEBUG lacks " + framesDebug + ": run make bench-frames")
	}
	ownLog := filepath.Join(t.TempDir(), "bench-frames.log")
	f, err := os.OpenFile(ownLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	log.SetOutput(f) // the benchmark's own frames: the direct side's
	t.Cleanup(func() { log.SetOutput(os.Stderr); f.Close() })

	ctx := t.Context()
	cfg := fleetConfig{Nodes: 1, Pods: defaultFleetPods, Rounds: 1, Window: fleetWindow, Settle: fleetSettle}
	fl := &fleet{c: framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{fleetNamespace}}), cfg: cfg}
	r := &fleetResults{cfg: cfg}
	if err := fl.load(ctx, r); err != nil {
		t.Fatal(err)
	}
	lite, err := fl.liteFrames(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := fl.directFrames(ctx, r, ownLog)
	if err != nil {
		t.Fatal(err)
	}
	table := frames.Table([]string{"apiserver-lite", "kubelet read set direct"}, []frames.Counts{lite, direct})
	t.Logf("one node, %d pods, %s windows; failed Lease renewals %d / %d:\n%s",
		cfg.Pods, cfg.Window, r.leaseFails[bench.LiteSide].Load(), r.leaseFails[bench.KubeSide].Load(), table)
	if p := os.Getenv(envFramesReport); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// liteFrames runs node 0's apiserver-lite with Lease renewals through it
// and counts its cloud connections' frames over a window.
func (f *fleet) liteFrames(ctx context.Context, r *fleetResults) (frames.Counts, error) {
	opened := time.Now().Truncate(time.Second)
	f.nodes[0].Start()
	defer f.nodes[0].Kill()
	if err := f.caughtUp(ctx, 0, f.cfg.Pods, ""); err != nil {
		return frames.Counts{}, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := f.renewLeases(sctx, &r.leaseFails[bench.LiteSide]); err != nil {
		return frames.Counts{}, err
	}
	from, to := f.framesWindow()
	return frames.CountFile(f.nodes[0].Process().LogPath, opened, from, to)
}

// directFrames opens node 0's kubelet read set directly with the same
// renewals and counts its connections' frames, which the benchmark logs
// to ownLog, over a window.
func (f *fleet) directFrames(ctx context.Context, r *fleetResults, ownLog string) (frames.Counts, error) {
	opened := time.Now().Truncate(time.Second)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	k, err := direct.Open(sctx, f.nodes[0].CloudConfig, f.directNode(0))
	if err != nil {
		return frames.Counts{}, err
	}
	go lease.Renew(sctx, k.Clientset(), nodeName(0), &r.leaseFails[bench.KubeSide])
	from, to := f.framesWindow()
	return frames.CountFile(ownLog, opened, from, to)
}

// framesWindow waits out the settling time and a window, and returns the
// window's whole seconds: frames are logged to the second.
func (f *fleet) framesWindow() (from, to time.Time) {
	time.Sleep(f.cfg.Settle)
	from = time.Now().Truncate(time.Second).Add(time.Second)
	to = from.Add(f.cfg.Window)
	time.Sleep(time.Until(to) + time.Second)
	return from, to
}
