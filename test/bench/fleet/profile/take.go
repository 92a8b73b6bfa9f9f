//go:build e2e

package profile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
)

const (
	// Chunk is the longest CPU profile asked of kube-apiserver at once:
	// /debug/pprof is not a long-running request, so its 60 s request
	// timeout ends a longer one. A window is profiled in chunks.
	Chunk = 40 * time.Second
	// RestartChunk is each profile taken over a restart: short, so that
	// the last one ends soon after every node serves the change.
	RestartChunk = 5 * time.Second
)

// Take saves kube-apiserver's CPU profiles covering about d, one per
// Chunk, to dir as <label>-<n>.pprof through cs, and returns their paths.
func Take(ctx context.Context, cs kubernetes.Interface, d time.Duration, dir, label string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var paths []string
	for left := d; left >= time.Second; left -= Chunk {
		secs := int(min(left, Chunk) / time.Second)
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
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

// Until takes kube-apiserver's CPU profiles in RestartChunk chunks until
// stop is closed, each saved as label-<i>, and returns their paths.
func Until(ctx context.Context, cs kubernetes.Interface, dir string, stop <-chan struct{}, label string) ([]string, error) {
	var paths []string
	for i := 0; ; i++ {
		select {
		case <-stop:
			return paths, nil
		default:
		}
		p, err := Take(ctx, cs, RestartChunk, dir, label+"-"+strconv.Itoa(i))
		paths = append(paths, p...)
		if err != nil {
			return paths, err
		}
	}
}
