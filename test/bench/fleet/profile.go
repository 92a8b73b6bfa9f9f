//go:build e2e

package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// cloudProfileChunk is the longest CPU profile asked of kube-apiserver
	// at once: /debug/pprof is not a long-running request, so its 60 s
	// request timeout ends a longer one. A window is profiled in chunks.
	cloudProfileChunk = 40 * time.Second
	// cloudProfileTop is how many functions a side's profile summary
	// lists in the report.
	cloudProfileTop = 10
)

// profiledSide measures a side's steady state while profiling
// kube-apiserver's CPU over the same window, in chunks saved to dir as
// <label>-<n>.pprof.
func profiledSide(ctx context.Context, c *framework.Cluster, cfg fleetConfig, base baseline, dir, label string) (sideCost, []string, error) {
	bytes0, err := readCloudBytes(ctx, c)
	if err != nil {
		return sideCost{}, nil, err
	}
	start := time.Now()
	done := make(chan struct{})
	var paths []string
	var perr error
	go func() {
		defer close(done)
		paths, perr = profileCloud(ctx, c, cfg.Window, dir, label)
	}()
	cost, err := measureSide(ctx, c, cfg.Window, base.watches)
	<-done
	if err != nil {
		return cost, paths, err
	}
	bytes1, err := readCloudBytes(ctx, c)
	cost.bytesPerMin = bytes1.minus(bytes0).total() / time.Since(start).Minutes()
	conns, cerr := cloudConns(c)
	cost.conns = conns - base.conns
	return cost, paths, errors.Join(err, cerr, perr)
}

// profileCloud saves kube-apiserver's CPU profiles covering about d, one
// per cloudProfileChunk, and returns their paths.
func profileCloud(ctx context.Context, c *framework.Cluster, d time.Duration, dir, label string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var paths []string
	for left := d; left >= time.Second; left -= cloudProfileChunk {
		secs := int(min(left, cloudProfileChunk) / time.Second)
		body, err := c.Admin.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(secs)).DoRaw(ctx)
		if err != nil {
			return paths, fmt.Errorf("kube-apiserver CPU profile: %w", err)
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", label, len(paths)))
		if err := os.WriteFile(p, body, 0o600); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// profileTop is `go tool pprof -top` of the profiles merged, its
// cloudProfileTop heaviest functions by flat CPU.
func profileTop(ctx context.Context, paths []string) (string, error) {
	if len(paths) == 0 {
		return "", fmt.Errorf("no profile to summarise")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command for the profile summary: %w", err)
	}
	args := append([]string{"tool", "pprof", "-top", "-nodecount=" + strconv.Itoa(cloudProfileTop)}, paths...)
	out, err := exec.CommandContext(ctx, goBin, args...).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof -top: %w", err)
	}
	return string(out), nil
}
