//go:build e2e

package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// heapAfterGC is the daemon's heap profile in text after a collection; its
// trailer carries runtime.MemStats read right after it.
const heapAfterGC = "/debug/pprof/heap?gc=1&debug=1"

// heapAllocLine starts the trailer's line of the live heap in bytes.
const heapAllocLine = "# HeapAlloc = "

// seriesPodHeld is apiserver-lite's gauge of resources held for pods.
const seriesPodHeld = "apiserver_lite_pod_held_resources"

// heldResources reads how many resources apiserver-lite at base holds for
// the node's pods, from its /metrics.
func heldResources(ctx context.Context, base string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("apiserver-lite metrics: %w", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), seriesPodHeld+" "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("apiserver-lite metrics %q: %w", sc.Text(), err)
			}
			return int(n), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("apiserver-lite metrics: %w", err)
	}
	return 0, fmt.Errorf("apiserver-lite metrics: no %s", seriesPodHeld)
}

// liteMemory reads apiserver-lite's VmRSS and VmHWM, its live heap right
// after a collection, and its data dir's size.
func (h *heldRun) liteMemory(ctx context.Context) (heldMemory, error) {
	var m heldMemory
	var err error
	if m.heap, err = liveHeap(ctx, h.c.EdgeURL); err != nil {
		return m, err
	}
	if m.Memory, err = ReadMemory(h.c.EdgeProcess().Pid()); err != nil {
		return m, err
	}
	m.disk, err = dirSize(h.c.EdgeDataDir())
	return m, err
}

// liveHeap forces a collection in the Go server at base and returns its
// HeapAlloc right after it, from its pprof heap profile's text trailer.
func liveHeap(ctx context.Context, base string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+heapAfterGC, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("heap profile: %s", resp.Status)
	}
	return parseHeapAlloc(resp.Body)
}

// parseHeapAlloc finds HeapAlloc in a text heap profile.
func parseHeapAlloc(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), heapAllocLine); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("heap profile %q: %w", sc.Text(), err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("heap profile: %w", err)
	}
	return 0, fmt.Errorf("heap profile: no %q line", strings.TrimSpace(heapAllocLine))
}
