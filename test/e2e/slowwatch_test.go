//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// stalledWatchers is the contract's count of local watchers that never
	// read.
	stalledWatchers = 300
	// stalledRcvBuf is each stalled watcher's socket receive buffer, in
	// bytes: a small TCP window, so it fills within a few events.
	stalledRcvBuf = 4 << 10
	// slowWriteInterval spaces the cloud writes: about 20 per second.
	slowWriteInterval = 50 * time.Millisecond
	// slowDrive is how long the cloud writes run.
	slowDrive = 20 * time.Second
	// slowPadding is the size of each configmap's payload, in bytes: the
	// kernel's socket buffers (a few MiB on loopback) must fill within the
	// drive before a stalled watcher's queue can.
	slowPadding = 32 << 10
	// slowRing is the edge's --watch-cache-size: the smallest watcher
	// buffer (100 events), so 400 updates overflow a stalled watcher's.
	slowRing = 100
	// slowNames is how many configmaps the writes cycle through.
	slowNames = 10
	// slowP99Bound bounds the healthy watcher's p99 delivery delay. The
	// contract's goal is 100 ms (measured in docs/reliability.md); on a
	// shared 2-core CI machine the tail follows the machine's load (a run
	// with no stalled watchers at all saw 160 ms), so the test asserts 5x
	// the goal: a fan-out that blocked on a stalled connection would show
	// seconds.
	slowP99Bound = 500 * time.Millisecond
	// slowRSSBound is the contract's 100 MiB RSS growth, with 2x headroom.
	slowRSSBound = 200 << 20
	// slowSettle bounds the wait for the last events, the watcher count and
	// the evictions after the writes.
	slowSettle = 30 * time.Second
	// rssSample spaces the edge's RSS samples.
	rssSample      = 250 * time.Millisecond
	seriesWatchers = `apiserver_lite_watchers{resource="configmaps"}`
	seriesTooSlow  = `apiserver_terminated_watchers_total{resource="configmaps"}`
)

// TestSlowWatchersDoNotHurtFastOnes opens 300 raw TCP watches on the edge
// that never read, plus one client-go watcher that does, then writes about
// 20 configmap updates per second in the cloud. The healthy watcher's p99
// delay from the cloud's answer to the local event, and the edge's RSS
// growth, stay within the contract's bounds; the stalled watchers are
// evicted as too slow and their connections closed, which frees the
// kernel's send buffers although their clients never read.
func TestSlowWatchersDoNotHurtFastOnes(t *testing.T) {
	const ns = "slowwatch"
	// A ring of slowRing events gives each watcher a buffer of as many,
	// so the stalled ones fall behind within the drive.
	c := framework.New(t, framework.Options{Namespaces: []string{ns}, WatchCacheSize: slowRing})
	c.StartEdge()
	ctx := t.Context()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	pad := strings.Repeat("x", slowPadding)
	for i := range slowNames {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("slow-%d", i)}, Data: map[string]string{"pad": pad}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap: %v", err)
		}
	}
	checkDurEdgeConverges(ctx, t, c, ns)
	pid := c.EdgeProcess().Pid()
	baseRSS := mustRSS(t, pid)

	for range stalledWatchers {
		openStalledWatcher(t, c.EdgePort, ns)
	}
	healthy := startHealthyWatcher(t, c, ns)
	waitMetricAtLeast(t, c, seriesWatchers, stalledWatchers+1)
	tooSlowBefore, _ := metricValue(t, c, seriesTooSlow)

	peak := startRSSSampler(ctx, pid)
	// Fill the stalled watchers' TCP windows and socket buffers first: the
	// contract's stalled watcher has a full window. While those buffers
	// still take data, every write goes to 301 connections.
	warmUp := fillStalledWatchers(t, cms, c.EdgePort, healthy)
	written := driveUpdates(t, cms, slowDrive, len(warmUp))
	received := healthy.waitFor(t, written)
	delays := deliveryDelays(t, written, received)
	growth := peak.stop() - baseRSS

	p99 := percentile(delays, 0.99)
	t.Logf("slow watchers: %d stalled, %d updates in %s; healthy watcher delay p50 %s p99 %s max %s; RSS %d MiB -> +%d MiB; terminated %v",
		stalledWatchers, len(written), slowDrive, percentile(delays, 0.5).Round(time.Millisecond), p99.Round(time.Millisecond),
		delays[len(delays)-1].Round(time.Millisecond), baseRSS>>20, growth>>20, mustMetric(t, c, seriesTooSlow)-tooSlowBefore)
	waitMetricAtLeast(t, c, seriesTooSlow, tooSlowBefore+1)
	late := lateUpdates(written, received, slowP99Bound/2)
	t.Logf("updates delayed over %s (seconds into the drive:delay):%s", slowP99Bound/2, late)
	if p99 > slowP99Bound {
		t.Errorf("healthy watcher p99 delay: got %s, want under %s", p99, slowP99Bound)
	}
	if growth > slowRSSBound {
		t.Errorf("edge RSS growth: got %d MiB, want under %d MiB", growth>>20, slowRSSBound>>20)
	}
	waitSendQueuesFreed(t, c.EdgePort)
}

// openStalledWatcher opens a watch of ns's configmaps over a socket with a
// tiny receive buffer and never reads it. It is closed when the test ends.
func openStalledWatcher(t *testing.T, port int, ns string) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledRcvBuf)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("dial stalled watcher: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	// A loopback Host: the loopback door refuses any other (DNS rebinding).
	req := fmt.Sprintf("GET /api/v1/namespaces/%s/configmaps?watch=true HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\n\r\n", ns, addr)
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatalf("send stalled watch: %v", err)
	}
}

// healthyWatcher records when each configmap event reached a client-go
// watch through the edge, by resourceVersion.
type healthyWatcher struct {
	w  watch.Interface
	mu sync.Mutex
	// at maps an event's RV to its arrival. Guarded by mu.
	at map[string]time.Time
	// err is why the watch ended early, if it did. Guarded by mu.
	err error
	// got is signalled after each event.
	got chan struct{}
}

func startHealthyWatcher(t *testing.T, c *framework.Cluster, ns string) *healthyWatcher {
	t.Helper()
	cms := c.EdgeClient().CoreV1().ConfigMaps(ns)
	list, err := cms.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("edge list: %v", err)
	}
	w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("edge watch: %v", err)
	}
	t.Cleanup(w.Stop)
	h := &healthyWatcher{w: w, at: map[string]time.Time{}, got: make(chan struct{}, 1)}
	go h.run()
	return h
}

func (h *healthyWatcher) run() {
	for ev := range h.w.ResultChan() {
		now := time.Now()
		h.mu.Lock()
		if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Modified {
			h.at[cm.ResourceVersion] = now
		} else if h.err == nil {
			h.err = fmt.Errorf("unexpected %s event %T", ev.Type, ev.Object)
		}
		h.mu.Unlock()
		select {
		case h.got <- struct{}{}:
		default:
		}
	}
	h.mu.Lock()
	if h.err == nil {
		h.err = fmt.Errorf("watch ended")
	}
	h.mu.Unlock()
}

// waitFor waits until every written RV has arrived and returns the
// arrivals; it fails the test if the watch ends or an RV is missing.
func (h *healthyWatcher) waitFor(t *testing.T, written map[string]time.Time) map[string]time.Time {
	t.Helper()
	deadline := time.After(slowSettle)
	for {
		h.mu.Lock()
		missing := 0
		for rv := range written {
			if _, ok := h.at[rv]; !ok {
				missing++
			}
		}
		err := h.err
		out := h.at
		h.mu.Unlock()
		if err != nil {
			t.Fatalf("healthy watcher: %v", err)
		}
		if missing == 0 {
			return out
		}
		select {
		case <-h.got:
		case <-deadline:
			t.Fatalf("healthy watcher: %d of %d updates never arrived", missing, len(written))
		}
	}
}

// patcher patches configmaps in the cloud.
type patcher interface {
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*corev1.ConfigMap, error)
}

// driveUpdates patches the configmaps in turn every slowWriteInterval for
// d, numbering the values from first, and returns when the cloud answered
// each, by RV.
func driveUpdates(t *testing.T, cms patcher, d time.Duration, first int) map[string]time.Time {
	t.Helper()
	written := map[string]time.Time{}
	tick := time.NewTicker(slowWriteInterval)
	defer tick.Stop()
	end := time.Now().Add(d)
	for i := first; time.Now().Before(end); i++ {
		<-tick.C
		patch := fmt.Sprintf(`{"data":{"n":"%d"}}`, i)
		cm, err := cms.Patch(t.Context(), fmt.Sprintf("slow-%d", i%slowNames), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("patch: %v", err)
		}
		written[cm.ResourceVersion] = time.Now()
	}
	return written
}

// deliveryDelays returns each update's delay, sorted; an event that
// arrived before the cloud's answer was read counts as zero.
func deliveryDelays(t *testing.T, written, received map[string]time.Time) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, len(written))
	for rv, w := range written {
		out = append(out, max(received[rv].Sub(w), 0))
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatal("no updates written")
	}
	return out
}

// lateUpdates lists the updates delayed more than over, in write order, as
// " <seconds into the drive>:<delay>".
func lateUpdates(written, received map[string]time.Time, over time.Duration) string {
	var first time.Time
	for _, w := range written {
		if first.IsZero() || w.Before(first) {
			first = w
		}
	}
	type late struct {
		at, delay time.Duration
	}
	var out []late
	for rv, w := range written {
		if d := received[rv].Sub(w); d > over {
			out = append(out, late{w.Sub(first), d})
		}
	}
	slices.SortFunc(out, func(a, b late) int { return int(a.at - b.at) })
	var b strings.Builder
	for _, l := range out {
		fmt.Fprintf(&b, " %.1f:%s", l.at.Seconds(), l.delay.Round(time.Millisecond))
	}
	return b.String()
}

// percentile returns the p-th quantile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// waitMetricAtLeast waits until the edge's series reaches want.
func waitMetricAtLeast(t *testing.T, c *framework.Cluster, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(slowSettle)
	for {
		got, _ := metricValue(t, c, series)
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %v, want at least %v within %s", series, got, want, slowSettle)
		}
		time.Sleep(rssSample)
	}
}

// rssPeak samples a process's RSS until stopped and keeps the highest.
type rssPeak struct {
	cancel context.CancelFunc
	done   chan int64
}

func startRSSSampler(ctx context.Context, pid int) *rssPeak {
	ctx, cancel := context.WithCancel(ctx)
	p := &rssPeak{cancel: cancel, done: make(chan int64, 1)}
	go func() {
		var peak int64
		for {
			if v, err := readRSS(pid); err == nil {
				peak = max(peak, v)
			}
			select {
			case <-ctx.Done():
				p.done <- peak
				return
			case <-time.After(rssSample):
			}
		}
	}()
	return p
}

// stop ends the sampling and returns the peak RSS in bytes.
func (p *rssPeak) stop() int64 {
	p.cancel()
	return <-p.done
}

func mustRSS(t *testing.T, pid int) int64 {
	t.Helper()
	v, err := readRSS(pid)
	if err != nil {
		t.Fatalf("edge RSS: %v", err)
	}
	return v
}

// readRSS returns VmRSS of pid from /proc, in bytes.
func readRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
