//go:build e2e

package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// Profiles beyond the watch run's: apiserver-lite during the initial sync
// and the WatchList informer start, the benchmark client during the
// informer start and its client floor, and heap profiles after the sync
// and after the rounds. Each profile gets a `go tool pprof -top` summary
// next to it.
// pprofTopNodes is how many functions a summary lists.
const pprofTopNodes = 25

// profiler saves profiles into dir and remembers what it saved.
type profiler struct {
	dir   string
	notes []string // one per profile saved: file name and what it covers
	files []string // paths of the profiles saved
}

func (p *profiler) path(name string) string { return filepath.Join(p.dir, name) }

func (p *profiler) saved(name, what string) {
	p.files = append(p.files, p.path(name))
	p.notes = append(p.notes, fmt.Sprintf("`%s` (%s)", name, what))
}

// duringSync returns syncFreshWith's hook that takes a CPU profile of lite
// from the moment it first serves pprof, for about as long as the last
// step's sync took.
func (p *profiler) duringSync(ctx context.Context, lite *server, expected time.Duration) func() func() error {
	return func() func() error {
		// Whole seconds, rounded down, so the profile ends before the
		// sync does rather than after, in the protobuf captures that
		// follow it and would charge their encoding to the sync.
		secs := max(1, int(math.Floor(expected.Seconds())))
		done := make(chan error, 1)
		go func() {
			start := time.Now()
			if err := PollUntil(ctx, func() error { return pprofServed(ctx, lite) }); err != nil {
				done <- err
				return
			}
			up := time.Since(start)
			name := "sync-cpu.pprof"
			if err := saveProfile(ctx, lite, "profile?seconds="+strconv.Itoa(secs), p.path(name)); err != nil {
				done <- err
				return
			}
			p.saved(name, fmt.Sprintf("apiserver-lite's CPU for %d s of the initial sync, from %.0f ms after its start, when pprof was first served", secs, ms(up)))
			done <- nil
		}()
		return func() error { return <-done }
	}
}

// pprofServed checks that s answers its pprof index.
func pprofServed(ctx context.Context, s *server) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+pprofIndex, nil)
	if err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", s.name, pprofIndex, resp.Status)
	}
	return nil
}

// heap saves lite's heap profile.
func (p *profiler) heap(ctx context.Context, lite *server, name, what string) error {
	if err := saveProfile(ctx, lite, "heap", p.path(name)); err != nil {
		return err
	}
	p.saved(name, what)
	return nil
}

// informer profiles the WatchList informer start: apiserver-lite's CPU
// and the benchmark client's while informers start against it one after
// the other, then the client's while they start against the replayed
// capture (the client floor).
func (p *profiler) informer(ctx context.Context, lite *server, node string, capture *watchCapture, profileFor time.Duration) error {
	secs := max(1, int(profileFor.Seconds()))
	var serverErr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		serverErr = saveProfile(ctx, lite, "profile?seconds="+strconv.Itoa(secs), p.path("watchlist-server-cpu.pprof"))
	}()
	starts, err := p.clientCPU("watchlist-client-cpu.pprof", finished, func() error {
		_, _, err := informerStart(ctx, lite, node)
		return err
	})
	<-finished
	if err = firstErr(err, serverErr); err != nil {
		return err
	}
	p.saved("watchlist-server-cpu.pprof", fmt.Sprintf("apiserver-lite's CPU for %d s while %d protobuf pod informers started against it one after the other", secs, starts))
	p.saved("watchlist-client-cpu.pprof", fmt.Sprintf("the benchmark client's CPU during those %d informer starts", starts))
	stop := make(chan struct{})
	timer := time.AfterFunc(profileFor, func() { close(stop) })
	defer timer.Stop()
	starts, err = p.clientCPU("watchlist-floor-cpu.pprof", stop, func() error {
		_, _, err := replayInformer(ctx, capture, node)
		return err
	})
	if err != nil {
		return err
	}
	p.saved("watchlist-floor-cpu.pprof", fmt.Sprintf("the benchmark client's CPU during %d informer starts against apiserver-lite's captured WatchList replayed from memory", starts))
	return nil
}

// clientCPU takes a CPU profile of the benchmark process while it calls f
// repeatedly until stop is closed, and returns how many calls it made.
func (p *profiler) clientCPU(name string, stop <-chan struct{}, f func() error) (int, error) {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return 0, err
	}
	out, err := os.Create(p.path(name))
	if err != nil {
		return 0, err
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return 0, fmt.Errorf("client CPU profile: %w", err)
	}
	defer pprof.StopCPUProfile()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return n, nil
		default:
		}
		if err := f(); err != nil {
			return n, err
		}
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// summarize writes each profile's `go tool pprof -top` next to it as .txt.
func (p *profiler) summarize(ctx context.Context) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("no go command for the profile summaries: %w", err)
	}
	for _, f := range p.files {
		out, err := exec.CommandContext(ctx, goBin, "tool", "pprof", "-top", "-nodecount="+strconv.Itoa(pprofTopNodes), f).Output()
		if err != nil {
			return fmt.Errorf("go tool pprof -top %s: %w", f, err)
		}
		if err := os.WriteFile(strings.TrimSuffix(f, ".pprof")+".txt", out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// note is the report's line on the profiles.
func (p *profiler) note() string {
	if len(p.notes) == 0 {
		return "none saved"
	}
	// The folder is named as the report links it: beside the report.
	return fmt.Sprintf("in [%[1]s/](%[1]s/) next to this report, each with its `go tool pprof -top` in a .txt beside it: %[2]s", filepath.Base(p.dir), strings.Join(p.notes, "; "))
}

// expectedProfiles are the profiles a run saves when apiserver-lite serves
// pprof.
var expectedProfiles = []string{"sync-cpu", "heap-after-sync", "watch-cpu", "heap-after-rounds",
	"watchlist-server-cpu", "watchlist-client-cpu", "watchlist-floor-cpu"}
