//go:build e2e

package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// regressionWrites advance the cloud's resource version far past what
	// a rebuilt cloud reaches with its bootstrap objects.
	regressionWrites = 400
	// regressionBound bounds the edge's replacement of its state after the
	// cloud came back with lower resource versions. Resuming from a
	// watermark the cloud never issued costs kube-apiserver's wait for a
	// too-large resource version and client-go's retries of it first.
	regressionBound = 2 * time.Minute
	// regressionQuiet is how long the edge must then stay free of relists
	// of the resource, so a relist loop would show.
	regressionQuiet = 10 * time.Second
)

// TestCloudRVRegression rebuilds the cloud on an empty etcd under a synced
// edge and re-creates one of two configmaps. The edge must notice that the
// cloud's resource versions went backwards, log it loudly, and serve
// exactly the cloud's new state: the re-created configmap with its new UID
// and resource version, the other one gone, and no relist loop.
func TestCloudRVRegression(t *testing.T) {
	const ns = "rvregress"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	ctx := t.Context()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	createDurConfigMap(ctx, t, cms, "kept", "old")
	createDurConfigMap(ctx, t, cms, "stale", "old")
	for i := range regressionWrites {
		patch := `{"data":{"v":"` + strconv.Itoa(i) + `"}}`
		if _, err := cms.Patch(ctx, "kept", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patch: %v", err)
		}
	}
	checkDurEdgeConverges(ctx, t, c, ns)
	before, err := c.EdgeClient().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("edge list: %v", err)
	}
	offset := durLogSize(t, c)

	c.WipeCloud()
	kept := createDurConfigMap(ctx, t, c.Admin.CoreV1().ConfigMaps(ns), "kept", "new")
	if rv, old := mustAtoi(t, kept.ResourceVersion), mustAtoi(t, before.ResourceVersion); rv >= old {
		t.Fatalf("scenario: rebuilt cloud is at RV %d, want below the edge's %d", rv, old)
	}
	took := mustCatchUp(t, c, ns, regressionBound)
	edgeKept, err := c.EdgeClient().CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || edgeKept.UID != kept.UID {
		t.Errorf("edge kept: got %v (err %v), want UID %s", edgeKept.UID, err, kept.UID)
	}
	replaced, relists := regressionLog(t, c, offset)
	if replaced == 0 {
		t.Errorf("edge log: no loud line about resource versions going backwards for %s", configMapsKey)
	}
	if v, _ := metricValue(t, c, seriesRegressed); v < 1 {
		t.Errorf("%s: got %v, want at least 1", seriesRegressed, v)
	}
	time.Sleep(regressionQuiet)
	if _, again := regressionLog(t, c, offset); again != relists {
		t.Errorf("edge relisted %s %d more times after catching up, want no loop", configMapsKey, again-relists)
	}
	t.Logf("cloud RV regression: edge replaced its state %s after the rebuilt cloud was ready (%d relists)",
		took.Round(time.Millisecond), relists)
}

// regressionLog counts, in the edge log from offset on, the configmaps
// syncer's lines about a restored cloud and its relists.
func regressionLog(t *testing.T, c *framework.Cluster, offset int64) (replaced, relists int) {
	t.Helper()
	data, err := os.ReadFile(c.EdgeProcess().LogPath)
	if err != nil {
		t.Fatalf("read edge log: %v", err)
	}
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if !strings.Contains(line, "resource="+configMapsKey+" ") {
			continue
		}
		if strings.Contains(line, "WENT BACKWARDS") {
			replaced++
		}
		if strings.Contains(line, "msg=relisted") {
			relists++
		}
	}
	return replaced, relists
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("resource version %q: %v", s, err)
	}
	return n
}
