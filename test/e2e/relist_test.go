//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// relistEdgeCache is apiserver-lite's --watch-cache-size here, far
	// below the number of changes made during the outage.
	relistEdgeCache = 10
	// relistCompactionInterval is kube-apiserver's --etcd-compaction-interval:
	// each run compacts etcd up to the revision of the previous run.
	relistCompactionInterval = "5s"
	// relistCompactionTimeout bounds the wait until etcd compacted past
	// the edge's watermark (two compaction intervals plus slack).
	relistCompactionTimeout = time.Minute
	// relistObjects is how many configmaps of each group (kept, modified,
	// deleted, added, added then deleted) the scenario uses. The outage
	// makes (4+relistModifications)*relistObjects changes, far more than
	// relistEdgeCache, while the diff a local watcher gets
	// (3*relistObjects) stays below the edge's per-watcher buffer of 100
	// events.
	relistObjects = 12
	// relistModifications is how many times each modified configmap changes
	// during the outage; the watcher must see only the last state.
	relistModifications = 3
	// relistQuiet is how long the local watcher must stay silent while the
	// edge is cut off.
	relistQuiet = 2 * time.Second
)

// TestRelistAfterCompaction cuts apiserver-lite off the cloud, makes more
// changes than either side's watch cache holds and lets etcd compact past
// the edge's watermark, so the cloud answers 410 to the edge's resume. The
// edge must relist and publish the difference: a local watcher opened before
// the cut sees exactly one ADDED, MODIFIED or DELETED per changed object,
// nothing for untouched or short-lived ones, no ERROR, and ends with the
// cloud's state.
func TestRelistAfterCompaction(t *testing.T) {
	const ns = "relist"
	c := framework.New(t, framework.Options{
		Namespaces:     []string{ns},
		WatchCacheSize: relistEdgeCache,
		EdgeLink:       true,
		// Without kube-apiserver's watch cache for configmaps, a watch
		// is served by etcd and gets 410 once its RV is compacted.
		CloudArgs: []string{
			"--watch-cache-sizes=configmaps#0",
			"--etcd-compaction-interval=" + relistCompactionInterval,
		},
	})
	c.StartEdge()
	ctx := t.Context()
	admin := durFastAdmin(t, c)
	cms := admin.CoreV1().ConfigMaps(ns)
	for _, prefix := range []string{"keep", "mod", "del"} {
		for i := range relistObjects {
			createDurConfigMap(ctx, t, cms, fmt.Sprintf("%s-%d", prefix, i), "0")
		}
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
	want := changeDurDuringCut(ctx, t, cms)
	waitDurCompacted(ctx, t, cms, cut.ResourceVersion)
	if ev, err := nextDurEvent(w, relistQuiet); !errors.Is(err, errDurNoEvent) {
		t.Fatalf("local watch got %s %v while the edge was cut off, want silence (%v)", ev.Type, ev.Object, err)
	}

	c.RestoreLink()
	checkDurWatchSees(t, w, startRV, want)
	if ev, err := nextDurEvent(w, relistQuiet); !errors.Is(err, errDurNoEvent) {
		t.Errorf("local watch got %s %v after the diff, want nothing more (%v)", ev.Type, ev.Object, err)
	}
	checkDurEdgeConverges(ctx, t, c, ns)
	checkDurRelistLogged(t, c, logOffset)
}

// changeDurDuringCut makes the outage's changes in ns and returns the event
// each changed object must cause on a local watcher, keyed by name.
func changeDurDuringCut(ctx context.Context, t *testing.T, cms typedcorev1.ConfigMapInterface) map[string]watch.Event {
	t.Helper()
	want := map[string]watch.Event{}
	for i := range relistObjects {
		name := fmt.Sprintf("add-%d", i)
		want[name] = watch.Event{Type: watch.Added, Object: createDurConfigMap(ctx, t, cms, name, "0")}
		gone := createDurConfigMap(ctx, t, cms, fmt.Sprintf("brief-%d", i), "0")
		deleteDurConfigMap(ctx, t, cms, gone.Name)
	}
	for round := 1; round <= relistModifications; round++ {
		for i := range relistObjects {
			name := fmt.Sprintf("mod-%d", i)
			patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, round)
			cm, err := cms.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("patch %s: %v", name, err)
			}
			want[name] = watch.Event{Type: watch.Modified, Object: cm}
		}
	}
	for i := range relistObjects {
		name := fmt.Sprintf("del-%d", i)
		last, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		deleteDurConfigMap(ctx, t, cms, name)
		want[name] = watch.Event{Type: watch.Deleted, Object: last}
	}
	return want
}

// waitDurCompacted waits until the cloud can no longer serve a list at the
// revision after rv, the newest RV the edge can have seen before the cut, so
// a watch resuming from the edge's watermark is answered 410.
func waitDurCompacted(ctx context.Context, t *testing.T, cms typedcorev1.ConfigMapInterface, rv string) {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("cloud list RV %q: %v", rv, err)
	}
	next := strconv.FormatUint(n+1, 10)
	out, err := eventually(ctx, relistCompactionTimeout, func() (string, error) {
		_, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: next, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return err.Error(), nil
		}
		return "", fmt.Errorf("list at exact RV %s: got %v, want 410", next, err)
	})
	if err != nil {
		t.Fatalf("etcd never compacted past the edge's watermark: %v", err)
	}
	t.Logf("cloud compacted: %s", out)
}

// checkDurRelistLogged wants the edge log, from offset on, to show that
// the configmaps syncer got 410 and relisted.
func checkDurRelistLogged(t *testing.T, c *framework.Cluster, offset int64) {
	t.Helper()
	data, err := os.ReadFile(c.EdgeProcess().LogPath)
	if err != nil {
		t.Fatalf("read edge log: %v", err)
	}
	expired, relisted := false, false
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if !strings.Contains(line, "resource="+configMapsKey+" ") {
			continue
		}
		expired = expired || strings.Contains(line, "cloud expired the watermark")
		relisted = relisted || strings.Contains(line, "msg=relisted")
	}
	if !expired || !relisted {
		t.Errorf("edge log after the cut: 410 seen %v, relisted %v for %s; want both", expired, relisted, configMapsKey)
	}
}

func createDurConfigMap(ctx context.Context, t *testing.T, cms typedcorev1.ConfigMapInterface, name, v string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": v}}
	got, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s: %v", name, err)
	}
	return got
}

func deleteDurConfigMap(ctx context.Context, t *testing.T, cms typedcorev1.ConfigMapInterface, name string) {
	t.Helper()
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap %s: %v", name, err)
	}
}

// durFastAdmin is an admin clientset without client-side rate limit.
func durFastAdmin(t *testing.T, c *framework.Cluster) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(c.AdminConfig)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("admin clientset: %v", err)
	}
	return cs
}

// durLogSize is the edge log's current size, to read only what follows.
func durLogSize(t *testing.T, c *framework.Cluster) int64 {
	t.Helper()
	fi, err := os.Stat(c.EdgeProcess().LogPath)
	if err != nil {
		t.Fatalf("stat edge log: %v", err)
	}
	return fi.Size()
}

// watchEdgeConfigMaps lists ns's configmaps through the edge and watches
// them from the list's resourceVersion, which it returns with the watch.
func watchEdgeConfigMaps(ctx context.Context, t *testing.T, c *framework.Cluster, ns string) (watch.Interface, string) {
	t.Helper()
	start, err := c.EdgeClient().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list through the edge: %v", err)
	}
	w, err := c.EdgeClient().CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
	if err != nil {
		t.Fatalf("watch through the edge from %s: %v", start.ResourceVersion, err)
	}
	return w, start.ResourceVersion
}
