//go:build e2e

package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	// diskSize is the tmpfs holding the edge's data dir: room for the
	// initial sync and, once the fill is removed, for the big configmaps
	// (each stored as an object and an event, both passing through the
	// WAL: about four times their size).
	diskSize = "16m"
	// bigConfigMaps of bigConfigMapSize bytes each are created while the
	// disk is full: more than the WAL of the initial sync can take again.
	bigConfigMaps    = 6
	bigConfigMapSize = 256 << 10
	// fullHold is how long the disk stays full after the cloud changes.
	fullHold = 20 * time.Second
	// maxRelistsWhileFull bounds the LISTs of the whole disk-full period:
	// the backoff (0.5 s doubling to 8 s) allows about 6 attempts in
	// fullHold, with 2x headroom; the old reset-before-commit bug relisted
	// about every 0.6 s (over 30).
	maxRelistsWhileFull = 12
	// diskRecoveryBound is the 10 s backoff cap plus a commit, with 2x
	// headroom.
	diskRecoveryBound = 30 * time.Second
	// storeFaultTimeout bounds the wait for /readyz to name the failed
	// commit.
	storeFaultTimeout = 30 * time.Second
	// fillChunk is the size of each write that fills the disk.
	fillChunk = 64 << 10
)

// TestDiskFullWhileRunning puts the edge's data dir on a small tmpfs,
// fills it, and changes configmaps in the cloud: the edge keeps serving its
// last committed state, /readyz names the failed commit, it does not storm
// the cloud with LISTs and publishes no event it has not committed. Once
// space returns it catches up with no loss.
func TestDiskFullWhileRunning(t *testing.T) {
	const ns = "diskfull"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	dataDir := mountSmallDisk(t, c)
	c.StartEdge()
	ctx := t.Context()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	for i := range 3 {
		createDurConfigMap(ctx, t, cms, fmt.Sprintf("before-%d", i), "0")
	}
	checkDurEdgeConverges(ctx, t, c, ns)
	events := startEventRecorder(t, c, ns)
	relistsBefore := relistCount(t, c)

	fill := fillDisk(t, dataDir)
	full := time.Now()
	if _, err := cms.Patch(ctx, "before-0", types.MergePatchType, []byte(`{"data":{"v":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	deleteDurConfigMap(ctx, t, cms, "before-1")
	pad := strings.Repeat("x", bigConfigMapSize)
	for i := range bigConfigMaps {
		createDurConfigMap(ctx, t, cms, fmt.Sprintf("big-%d", i), pad)
	}
	reason := waitStoreFault(t, c)
	time.Sleep(time.Until(full.Add(fullHold)))

	checkServesCommitted(t, c, ns, events)
	relists := relistCount(t, c) - relistsBefore
	if relists > maxRelistsWhileFull {
		t.Errorf("relists while the disk was full for %s: got %v, want at most %d", fullHold, relists, maxRelistsWhileFull)
	}

	if err := os.Remove(fill); err != nil {
		t.Fatalf("free space: %v", err)
	}
	freed := time.Now()
	caughtUp := waitEdgeEqualsCloud(t, c, ns, diskRecoveryBound)
	events.checkComplete(t, c, ns)
	waitStoreHealthy(t, c)
	t.Logf("disk full: /readyz said %q; %v relists in %s full; caught up %s after space returned",
		reason, relists, fullHold, caughtUp.Sub(freed).Round(time.Millisecond))
}

// mountSmallDisk mounts a diskSize tmpfs on the edge's data dir, or skips
// the test when mounting is not permitted. It is unmounted after the edge
// is killed when the test ends.
func mountSmallDisk(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	dir := filepath.Dir(c.EdgeDBPath())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("create data dir: %v", err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+diskSize+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("disk-full scenario needs a tmpfs mount (root): mount -t tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if p := c.EdgeProcess(); p != nil {
			_ = p.Kill()
		}
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file into dir until the disk is full and returns its
// path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "fill")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatalf("fill disk: %v", err)
	}
	defer f.Close()
	chunk := make([]byte, fillChunk)
	for {
		if _, err := f.Write(chunk); err != nil {
			// tmpfs takes a partial write up to its last page.
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill disk: %v", err)
			}
			return path
		}
	}
}

// waitStoreFault waits until /readyz?verbose reports the failed commit and
// returns that line.
func waitStoreFault(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	deadline := time.Now().Add(storeFaultTimeout)
	for {
		_, body := edgeRawRequest(t, "GET", c.EdgeURL+"/readyz?verbose", "", "")
		for line := range strings.Lines(string(body)) {
			if strings.HasPrefix(line, "[-]store-writable failed") {
				if !strings.Contains(line, "full") {
					t.Errorf("/readyz store line does not say the disk is full: %q", line)
				}
				return strings.TrimSpace(line)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz?verbose did not name the full disk within %s:\n%s", storeFaultTimeout, body)
		}
		time.Sleep(linkPollInterval)
	}
}

// waitStoreHealthy waits until /readyz passes its store check again.
func waitStoreHealthy(t *testing.T, c *framework.Cluster) {
	t.Helper()
	deadline := time.Now().Add(storeFaultTimeout)
	for {
		_, body := edgeRawRequest(t, "GET", c.EdgeURL+"/readyz?verbose", "", "")
		if strings.Contains(string(body), "[+]store-writable ok") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz?verbose store check still failing %s after space returned:\n%s", storeFaultTimeout, body)
		}
		time.Sleep(linkPollInterval)
	}
}

// checkServesCommitted checks, while the disk is full, that the edge
// serves exactly what its database holds, that this lacks some of the
// cloud's changes (the fault was real), and that no local watcher got an
// event above the stored watermark.
func checkServesCommitted(t *testing.T, c *framework.Cluster, ns string, events *eventRecorder) {
	t.Helper()
	ctx := t.Context()
	// A read transaction of the live WAL database sees what is committed.
	st, err := c.ReadEdgeStore(ctx, configMapsKey)
	if err != nil {
		t.Fatalf("read edge store: %v", err)
	}
	if st.Integrity != "ok" {
		t.Errorf("PRAGMA integrity_check while full: got %q, want ok", st.Integrity)
	}
	stored := map[string]string{}
	for _, o := range st.Objects {
		if o.Namespace == ns {
			stored[o.Name] = strconv.FormatUint(o.RV, 10)
		}
	}
	local, err := c.EdgeClient().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("edge list while the disk is full: %v", err)
	}
	served := map[string]string{}
	for _, cm := range local.Items {
		served[cm.Name] = cm.ResourceVersion
	}
	if fmt.Sprint(served) != fmt.Sprint(stored) {
		t.Errorf("edge serves %v while its database holds %v", served, stored)
	}
	if _, ok := served[fmt.Sprintf("big-%d", bigConfigMaps-1)]; ok {
		t.Errorf("edge serves big-%d although the disk was full: the fault was not injected", bigConfigMaps-1)
	}
	for _, rv := range events.rvs() {
		if rv > st.Watermark {
			t.Errorf("a local watcher got an event at RV %d above the stored watermark %d", rv, st.Watermark)
		}
	}
}

// waitEdgeEqualsCloud waits until the edge serves the cloud's configmaps
// of ns (names, RVs, data) and returns when it did.
func waitEdgeEqualsCloud(t *testing.T, c *framework.Cluster, ns string, bound time.Duration) time.Time {
	t.Helper()
	ctx := t.Context()
	edge := c.EdgeClient().CoreV1().ConfigMaps(ns)
	deadline := time.Now().Add(bound)
	var last string
	for time.Now().Before(deadline) {
		cloud, err := c.Admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("cloud list: %v", err)
		}
		local, err := edge.List(ctx, metav1.ListOptions{})
		if err == nil {
			want, got := durConfigMapStates(cloud.Items), durConfigMapStates(local.Items)
			if fmt.Sprint(want) == fmt.Sprint(got) {
				return time.Now()
			}
			last = fmt.Sprintf("edge has %d configmaps, cloud %d", len(got), len(want))
		} else {
			last = err.Error()
		}
		time.Sleep(catchUpPoll)
	}
	t.Fatalf("edge not equal to the cloud within %s after space returned: %s", bound, last)
	return time.Time{}
}

// relistCount sums apiserver_lite_relists_total over every reason and
// resource.
func relistCount(t *testing.T, c *framework.Cluster) float64 {
	t.Helper()
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(edgeGetText(t, c.EdgeURL+"/metrics")))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && strings.HasPrefix(name, "apiserver_lite_relists_total{") {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			sum += v
		}
	}
	return sum
}

// eventRecorder keeps every event of one local watch of a namespace's
// configmaps.
type eventRecorder struct {
	mu sync.Mutex
	// events are the events so far, in order. Guarded by mu.
	events []watch.Event
	// ended is set when the watch ended. Guarded by mu.
	ended bool
}

func startEventRecorder(t *testing.T, c *framework.Cluster, ns string) *eventRecorder {
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
	r := &eventRecorder{}
	go func() {
		for ev := range w.ResultChan() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
	}()
	return r
}

// rvs returns the RVs of the events so far; an ERROR event counts as 0.
func (r *eventRecorder) rvs() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]uint64, 0, len(r.events))
	for _, ev := range r.events {
		var rv uint64
		if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
			rv, _ = strconv.ParseUint(cm.ResourceVersion, 10, 64)
		}
		out = append(out, rv)
	}
	return out
}

// checkComplete checks that the watch, still open, got every change of
// the cloud's current state with its RV, in increasing RV order, and no
// ERROR.
func (r *eventRecorder) checkComplete(t *testing.T, c *framework.Cluster, ns string) {
	t.Helper()
	cloud, err := c.Admin.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cloud list: %v", err)
	}
	want := map[string]string{"before-1": "DELETED"}
	for _, cm := range cloud.Items {
		if cm.Name != "before-2" && cm.Name != "kube-root-ca.crt" {
			want[cm.Name] = cm.ResourceVersion
		}
	}
	_, err = eventually(t.Context(), storeFaultTimeout, func() (string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		got := map[string]string{}
		var prev uint64
		for _, ev := range r.events {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				t.Fatalf("local watcher got %s %T, want configmap events only", ev.Type, ev.Object)
			}
			rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
			if rv <= prev {
				t.Fatalf("local watcher event RVs not increasing: %d after %d", rv, prev)
			}
			prev = rv
			got[cm.Name] = cm.ResourceVersion
			if ev.Type == watch.Deleted {
				got[cm.Name] = "DELETED"
			}
		}
		if r.ended {
			t.Fatalf("local watcher ended after %d events", len(r.events))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return "", fmt.Errorf("local watcher saw %v, want %v", got, want)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("%v", err)
	}
}
