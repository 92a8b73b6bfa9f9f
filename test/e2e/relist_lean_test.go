//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// leanRelistObjects is how many configmaps the lean scenario holds; its
// outage changes three of them (and adds one), under the tenth of the
// objects above which a relist lists full objects.
const leanRelistObjects = 40

// TestRelistLeanAfterCompaction is TestRelistAfterCompaction with few
// changes: the edge relists lean (metadata list, then exact reads of the
// changed objects at the list's resourceVersion) and a local watcher opened
// before the cut gets exactly the difference, a re-created object as a
// DELETED of its old state then an ADDED with its new UID, as a watch of
// the cloud would have shown it.
func TestRelistLeanAfterCompaction(t *testing.T) {
	const ns = "relist-lean"
	c := framework.New(t, framework.Options{
		Namespaces:     []string{ns},
		WatchCacheSize: relistEdgeCache,
		EdgeLink:       true,
		CloudArgs:      []string{"--watch-cache-sizes=configmaps#0", "--etcd-compaction-interval=" + relistCompactionInterval},
	})
	c.StartEdge()
	ctx := t.Context()
	cms := durFastAdmin(t, c).CoreV1().ConfigMaps(ns)
	for i := range leanRelistObjects {
		createDurConfigMap(ctx, t, cms, fmt.Sprintf("cm-%02d", i), "0")
	}
	checkDurEdgeConverges(ctx, t, c, ns)
	w, startRV := watchEdgeConfigMaps(ctx, t, c, ns)
	defer w.Stop()

	c.CutLink()
	cut, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cloud list at the cut: %v", err)
	}
	logOffset := durLogSize(t, c)
	want := map[string][]watch.Event{}
	for round := 1; round <= relistModifications; round++ {
		cm, err := cms.Patch(ctx, "cm-00", types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"v":"%d"}}`, round)), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("patch cm-00: %v", err)
		}
		want["cm-00"] = []watch.Event{{Type: watch.Modified, Object: cm}}
	}
	for _, name := range []string{"cm-01", "cm-02"} {
		last, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		deleteDurConfigMap(ctx, t, cms, name)
		want[name] = []watch.Event{{Type: watch.Deleted, Object: last}}
	}
	want["cm-02"] = append(want["cm-02"], watch.Event{Type: watch.Added, Object: createDurConfigMap(ctx, t, cms, "cm-02", "again")})
	want["added"] = []watch.Event{{Type: watch.Added, Object: createDurConfigMap(ctx, t, cms, "added", "0")}}
	createDurConfigMap(ctx, t, cms, "brief", "0")
	deleteDurConfigMap(ctx, t, cms, "brief")
	waitDurCompacted(ctx, t, cms, cut.ResourceVersion)

	c.RestoreLink()
	checkDurWatchSeqs(t, w, startRV, want)
	checkDurEdgeConverges(ctx, t, c, ns)
	checkLeanRelistLogged(t, c, logOffset)
}

// checkLeanRelistLogged wants the edge log, from offset on, to show a
// lean relist of the configmaps.
func checkLeanRelistLogged(t *testing.T, c *framework.Cluster, offset int64) {
	t.Helper()
	data, err := os.ReadFile(c.EdgeProcess().LogPath)
	if err != nil {
		t.Fatalf("read edge log: %v", err)
	}
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if strings.Contains(line, "msg=relisted resource="+configMapsKey+" ") && strings.Contains(line, " lean=true") {
			return
		}
	}
	t.Errorf("edge log after the cut: no lean relist of %s", configMapsKey)
}
