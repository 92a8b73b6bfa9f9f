//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// stalenessRise is how long the test lets staleness grow while the link
// is cut, well above the scrape granularity.
const stalenessRise = 3 * time.Second

// metricValue scrapes the edge's /metrics and returns the value of the
// series named exactly series (name plus labels), and whether it exists.
func metricValue(t *testing.T, c *framework.Cluster, series string) (float64, bool) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(edgeGetText(t, c.EdgeURL+"/metrics")))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == series {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", series, err)
			}
			return v, true
		}
	}
	return 0, false
}

func mustMetric(t *testing.T, c *framework.Cluster, series string) float64 {
	t.Helper()
	v, ok := metricValue(t, c, series)
	if !ok {
		t.Fatalf("/metrics has no %s", series)
	}
	return v
}

// Series the metrics scenarios read.
const (
	seriesRelistBytes = `apiserver_lite_relist_bytes_total{resource="configmaps"}`
	seriesLink        = "apiserver_lite_cloud_link_up"
	seriesStale       = `apiserver_lite_staleness_seconds{resource="configmaps"}`
	seriesExpired     = `apiserver_lite_relists_total{reason="expired",resource="configmaps"}`
	seriesRegressed   = `apiserver_lite_relists_total{reason="regressed",resource="configmaps"}`
	seriesWatermark   = `apiserver_watch_cache_resource_version{resource="configmaps"}`
)

// startMetricsEdge starts a cluster and an edge that has synced one
// configmap of ns.
func startMetricsEdge(t *testing.T, ns string, opts framework.Options) (*framework.Cluster, typedcorev1.ConfigMapInterface) {
	t.Helper()
	opts.Namespaces = []string{ns}
	c := framework.New(t, opts)
	c.StartEdge()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	createDurConfigMap(t.Context(), t, cms, "before", "0")
	checkDurEdgeConverges(t.Context(), t, c, ns)
	if got := mustMetric(t, c, seriesLink); got != 1 {
		t.Errorf("%s while connected: got %v, want 1", seriesLink, got)
	}
	if _, ok := metricValue(t, c, seriesExpired); ok {
		t.Errorf("%s present before any 410", seriesExpired)
	}
	return c, cms
}

// TestMetricsNodeSeries reads the series the dashboard and alert rules
// added from a running edge: the store's size and its file system's room,
// the state key (the framework gives one), and a request the kubelet's
// door cannot authenticate, counted under that door.
func TestMetricsNodeSeries(t *testing.T) {
	const ns = "ops-node-series"
	c, _ := startMetricsEdge(t, ns, framework.Options{})
	if got := mustMetric(t, c, "apiserver_lite_store_bytes"); got <= 0 {
		t.Errorf("apiserver_lite_store_bytes: got %v, want the store's size", got)
	}
	size := mustMetric(t, c, "apiserver_lite_store_filesystem_size_bytes")
	if avail := mustMetric(t, c, "apiserver_lite_store_filesystem_available_bytes"); avail <= 0 || avail > size {
		t.Errorf("store file system: got %v available of %v, want some and at most the size", avail, size)
	}
	if got := mustMetric(t, c, "apiserver_lite_encryption_key_missing"); got != 0 {
		t.Errorf("apiserver_lite_encryption_key_missing with a state key: got %v, want 0", got)
	}
	const failures = `apiserver_lite_authentication_failures_total{door="loopback"}`
	before, _ := metricValue(t, c, failures)
	if code := doorGet(t, c, c.DoorURL+"/api/v1/namespaces/"+ns+"/configmaps", "forged-token", nil); code != http.StatusUnauthorized {
		t.Fatalf("a forged token on the kubelet's door: got %d, want 401", code)
	}
	if got := mustMetric(t, c, failures); got != before+1 {
		t.Errorf("%s after one 401: got %v, want %v", failures, got, before+1)
	}
}

// TestMetricsThroughOutage stops the cloud: /metrics shows the link down
// and staleness rising, then, with the cloud back, the link up and
// staleness reset.
func TestMetricsThroughOutage(t *testing.T) {
	const ns = "ops-metrics"
	const link, stale = seriesLink, seriesStale
	c, cms := startMetricsEdge(t, ns, framework.Options{})
	ctx := t.Context()

	c.StopCloud()
	waitCloudLink(t, c, "disconnected")
	if got := mustMetric(t, c, link); got != 0 {
		t.Errorf("%s while the cloud is down: got %v, want 0", link, got)
	}
	first := mustMetric(t, c, stale)
	time.Sleep(stalenessRise) // staleness must grow with wall time
	second := mustMetric(t, c, stale)
	if second < first+stalenessRise.Seconds()-1 {
		t.Errorf("%s while the cloud is down: went from %v to %v over %s, want it to rise", stale, first, second, stalenessRise)
	}
	c.StartCloud()
	waitCloudLink(t, c, "connected")
	createDurConfigMap(ctx, t, cms, "back", "0")
	checkDurEdgeConverges(ctx, t, c, ns)
	if got := mustMetric(t, c, link); got != 1 {
		t.Errorf("%s after the cloud returned: got %v, want 1", link, got)
	}
	if got := mustMetric(t, c, stale); got >= second {
		t.Errorf("%s after the cloud returned: got %v, want below %v", stale, got, second)
	}
}

// TestMetricsCountExpiredRelist cuts the edge's link long enough for etcd
// to compact past its watermark: the cloud answers 410 when the link
// returns, and the relist is counted with reason "expired".
func TestMetricsCountExpiredRelist(t *testing.T) {
	const ns = "ops-relist"
	const expired, watermark = seriesExpired, seriesWatermark
	c, cms := startMetricsEdge(t, ns, framework.Options{
		EdgeLink:  true,
		CloudArgs: []string{"--watch-cache-sizes=configmaps#0", "--etcd-compaction-interval=" + relistCompactionInterval},
	})
	ctx := t.Context()
	cut, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	c.CutLink()
	wmBefore := mustMetric(t, c, watermark)
	bytesBefore, _ := metricValue(t, c, seriesRelistBytes)
	createDurConfigMap(ctx, t, cms, "during", "0")
	waitDurCompacted(ctx, t, cms, cut.ResourceVersion)
	c.RestoreLink()
	if _, err := eventually(ctx, edgeSyncTimeout, func() (string, error) {
		if v, ok := metricValue(t, c, expired); !ok || v < 1 {
			return "", fmt.Errorf("%s: got %v (present %v), want >= 1", expired, v, ok)
		}
		if v := mustMetric(t, c, watermark); v <= wmBefore {
			return "", fmt.Errorf("%s: got %v, want above %v", watermark, v, wmBefore)
		}
		if v, _ := metricValue(t, c, seriesRelistBytes); v <= bytesBefore {
			return "", fmt.Errorf("%s: got %v, want above %v (the relist's objects)", seriesRelistBytes, v, bytesBefore)
		}
		return "", nil
	}); err != nil {
		t.Errorf("after the forced 410: %v", err)
	}
	checkDurEdgeConverges(ctx, t, c, ns)
}

// TestSnapshotSeedsOfflineNode saves a snapshot from a running edge,
// restores it over the edge's data dir, starts the edge with the cloud
// stopped (it serves the snapshot's objects at their RVs), then starts the
// cloud: the edge resumes from the snapshot's RVs without a relist.
func TestSnapshotSeedsOfflineNode(t *testing.T) {
	const ns = "ops-snapshot"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	ctx := t.Context()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	created := createDurConfigMap(ctx, t, cms, "seeded", "1")
	checkDurEdgeConverges(ctx, t, c, ns)

	dataDir := filepath.Join(c.Dir, "edge-data")
	snap := filepath.Join(c.Dir, "node.snap")
	edgeCLI(t, c, "snapshot", "save", "--data-dir", dataDir, snap)
	c.KillEdge()
	c.StopCloud()
	edgeCLI(t, c, "snapshot", "restore", snap, "--data-dir", dataDir, "--node-name", c.NodeName, "--force",
		"--encryption-key-file", c.EncryptionKeyFile)
	c.StartEdge()
	got, err := c.EdgeClient().CoreV1().ConfigMaps(ns).Get(ctx, "seeded", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("offline GET from the seeded edge: got %v %v, want RV %s", got, err, created.ResourceVersion)
	}

	c.StartCloud()
	waitCloudLink(t, c, "connected")
	createDurConfigMap(ctx, t, cms, "after", "2")
	checkDurEdgeConverges(ctx, t, c, ns)
	for _, reason := range []string{"initial", "expired", "regressed"} {
		series := fmt.Sprintf(`apiserver_lite_relists_total{reason=%q,resource="configmaps"}`, reason)
		if v, ok := metricValue(t, c, series); ok {
			t.Errorf("%s: got %v, want no relist after seeding from a snapshot in the cloud's window", series, v)
		}
	}
}

// edgeCLI runs an apiserver-lite operator command and fails on error.
func edgeCLI(t *testing.T, c *framework.Cluster, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.Bins.APIServerLite, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("apiserver-lite %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
