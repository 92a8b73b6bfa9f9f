//go:build e2e

package profile

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

const (
	// TopN is how many functions a side's profile summary lists, by flat
	// time.
	TopN = 10
	// CumN is how many functions a restart's cumulative profile summary
	// lists.
	CumN = 25
)

// Top is `go tool pprof -top` of the profiles merged, its TopN heaviest
// functions by flat CPU.
func Top(ctx context.Context, paths []string) (string, error) {
	return summary(ctx, paths, "-top", TopN)
}

// CumTop is `go tool pprof -top -cum` of the profiles merged, its CumN
// heaviest functions by cumulative CPU.
func CumTop(ctx context.Context, paths []string) (string, error) {
	return summary(ctx, paths, "-top -cum", CumN)
}

// summary is pprof's mode output of the profiles merged, n functions.
func summary(ctx context.Context, paths []string, mode string, n int) (string, error) {
	if len(paths) == 0 {
		return "", fmt.Errorf("no profile to summarise")
	}
	out, err := pprof(ctx, paths, "the profile summary", mode, "-nodecount="+strconv.Itoa(n))
	return string(out), err
}

// pprof runs `go tool pprof` with mode's flags, which name it in its
// errors, then extra's, over the profiles merged; use says what the go
// command is looked for.
func pprof(ctx context.Context, paths []string, use, mode string, extra ...string) ([]byte, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("no go command for %s: %w", use, err)
	}
	args := append(append([]string{"tool", "pprof"}, strings.Fields(mode)...), extra...)
	out, err := exec.CommandContext(ctx, goBin, append(args, paths...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof %s: %w", mode, err)
	}
	return out, nil
}
