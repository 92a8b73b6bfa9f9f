//go:build e2e

package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// suspect is a cost kube-apiserver may pay more for with apiserver-lite on
// every node, found in its CPU profile by the functions that do it.
type suspect struct {
	name string
	// funcs match the profile's functions whose cumulative time is the
	// suspect's; their times add up (none calls another).
	funcs *regexp.Regexp
}

// suspects are the issue's: HTTP/2 PINGs, the connections' own work
// (frames read and written), TLS handshakes, bookmarks, compression; and
// the watch events sent, bookmarks included: a per-object watch resumed
// from a resourceVersion older than the watch cache's gets that cache's
// bookmark every minute (the cacher compares each bookmark with the
// watch's start), where a reflector watching from a fresh LIST's gets none
// of a resource that does not change.
var suspects = []suspect{
	{"HTTP/2 PINGs answered", regexp.MustCompile(`^golang\.org/x/net/http2\.\(\*serverConn\)\.processPing$`)},
	{"HTTP/2 connections: frames read and written", regexp.MustCompile(`^golang\.org/x/net/http2\.\(\*serverConn\)\.(serve|readFrames|writeFrameAsync)$`)},
	{"TLS handshakes", regexp.MustCompile(`^crypto/tls\.\(\*Conn\)\.serverHandshake$`)},
	{"watch bookmarks dispatched", regexp.MustCompile(`^k8s\.io/apiserver/pkg/storage/cacher\.\(\*Cacher\)\.startDispatchingBookmarkEventsLocked$`)},
	{"gzip of responses", regexp.MustCompile(`^compress/gzip\.\(\*Writer\)\.(Write|Close)$`)},
	{"watch events and bookmarks sent (watch cache's watchers, watch handlers)",
		regexp.MustCompile(`^k8s\.io/apiserver/pkg/(storage/cacher\.\(\*cacheWatcher\)\.process|endpoints/handlers\.\(\*WatchServer\)\.HandleHTTP)$`)},
}

// suspectTimes are each suspect's cumulative CPU in a side's merged
// profiles, and the profiles' total.
type suspectTimes struct {
	total time.Duration
	cum   []time.Duration // by suspects' index
}

// profileSuspects reads the suspects' times from `go tool pprof -top -cum`
// of the profiles merged.
func profileSuspects(ctx context.Context, paths []string) (suspectTimes, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return suspectTimes{}, fmt.Errorf("no go command for the profile: %w", err)
	}
	args := append([]string{"tool", "pprof", "-top", "-cum", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"}, paths...)
	out, err := exec.CommandContext(ctx, goBin, args...).Output()
	if err != nil {
		return suspectTimes{}, fmt.Errorf("go tool pprof -top -cum: %w", err)
	}
	return parseSuspects(out)
}

// parseSuspects reads `go tool pprof -top -cum` output: its total samples
// line, then rows "flat flat% sum% cum cum% function".
func parseSuspects(out []byte) (suspectTimes, error) {
	st := suspectTimes{cum: make([]time.Duration, len(suspects))}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if _, after, ok := strings.Cut(line, "Total samples = "); ok {
			total, _, _ := strings.Cut(after, " ")
			d, err := pprofDuration(total)
			if err != nil {
				return st, err
			}
			st.total = d
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		fn := strings.Join(f[5:], " ")
		for i, s := range suspects {
			if !s.funcs.MatchString(fn) {
				continue
			}
			d, err := pprofDuration(f[3])
			if err != nil {
				return st, err
			}
			st.cum[i] += d
		}
	}
	if st.total == 0 {
		return st, fmt.Errorf("no total samples in the profile summary")
	}
	return st, sc.Err()
}

// pprofDuration parses pprof's "1.23s", "450ms", "0".
func pprofDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n == 0 {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("profile time %q: %w", s, err)
	}
	return d, nil
}

// writeSuspects writes each suspect's share of kube-apiserver's profiled
// CPU on each side.
func (r *fleetResults) writeSuspects(b *bytes.Buffer) {
	l, d := r.suspects[bench.LiteSide], r.suspects[bench.KubeSide]
	if l.total == 0 || d.total == 0 {
		return
	}
	fmt.Fprintf(b, "| kube-apiserver CPU profiled, every round | apiserver-lite on every node | kubelet read set direct |\n| --- | --- | --- |\n")
	fmt.Fprintf(b, "| all samples | %.2f s | %.2f s |\n", l.total.Seconds(), d.total.Seconds())
	for i, s := range suspects {
		fmt.Fprintf(b, "| %s | %.2f s (%.1f%%) | %.2f s (%.1f%%) |\n", s.name, l.cum[i].Seconds(), 100*l.cum[i].Seconds()/l.total.Seconds(),
			d.cum[i].Seconds(), 100*d.cum[i].Seconds()/d.total.Seconds())
	}
	b.WriteString("\n")
}
