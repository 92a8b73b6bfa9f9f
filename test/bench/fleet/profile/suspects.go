//go:build e2e

package profile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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

// SuspectTimes are each suspect's cumulative CPU in a side's merged
// profiles, and the profiles' total.
type SuspectTimes struct {
	Total time.Duration
	Cum   []time.Duration // by suspects' index
}

// ReadSuspects reads the suspects' times from `go tool pprof -top -cum`
// of the profiles merged.
func ReadSuspects(ctx context.Context, paths []string) (SuspectTimes, error) {
	out, err := pprof(ctx, paths, "the profile", "-top -cum", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0")
	if err != nil {
		return SuspectTimes{}, err
	}
	return parseSuspects(out)
}

// parseSuspects reads `go tool pprof -top -cum` output: its total samples
// line, then rows "flat flat% sum% cum cum% function".
func parseSuspects(out []byte) (SuspectTimes, error) {
	st := SuspectTimes{Cum: make([]time.Duration, len(suspects))}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if _, after, ok := strings.Cut(line, "Total samples = "); ok {
			total, _, _ := strings.Cut(after, " ")
			d, err := pprofDuration(total)
			if err != nil {
				return st, err
			}
			st.Total = d
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
			st.Cum[i] += d
		}
	}
	if st.Total == 0 {
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

// WriteSuspects writes each suspect's share of kube-apiserver's profiled
// CPU on each side; nothing unless both sides were read.
func WriteSuspects(b *bytes.Buffer, lite, direct SuspectTimes) {
	l, d := lite, direct
	if l.Total == 0 || d.Total == 0 {
		return
	}
	fmt.Fprintf(b, "| kube-apiserver CPU profiled, every round | apiserver-lite on every node | kubelet read set direct |\n| --- | --- | --- |\n")
	fmt.Fprintf(b, "| all samples | %.2f s | %.2f s |\n", l.Total.Seconds(), d.Total.Seconds())
	for i, s := range suspects {
		fmt.Fprintf(b, "| %s | %.2f s (%.1f%%) | %.2f s (%.1f%%) |\n", s.name, l.Cum[i].Seconds(), 100*l.Cum[i].Seconds()/l.Total.Seconds(),
			d.Cum[i].Seconds(), 100*d.Cum[i].Seconds()/d.Total.Seconds())
	}
	b.WriteString("\n")
}
