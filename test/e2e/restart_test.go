//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// restartEventTimeout bounds how long a change made after the cloud
	// returns may take to reach a local watcher: kube-apiserver's restart
	// plus apiserver-lite's reconnect backoff (at most 30 s).
	restartEventTimeout = 90 * time.Second
	// durStableGap is the pause between two edge lists that must agree
	// before the edge's state counts as settled.
	durStableGap = time.Second
)

// TestRestartOffline restarts apiserver-lite with SIGKILL while the cloud
// is down: it must come up ready on its persisted state, serve the same
// objects at the same list RV, resume a watch from an RV inside its
// persisted event log with exactly the events after it, continue a watch
// from the list RV into the changes made once the cloud is back, and
// answer a watch from an RV older than the log with a clean 410 ERROR
// event.
func TestRestartOffline(t *testing.T) {
	const ns = "restart"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	ctx := t.Context()
	cms := c.Admin.CoreV1().ConfigMaps(ns)
	created := map[string]*corev1.ConfigMap{}
	for _, name := range []string{"old", "a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}
		got, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create configmap %s: %v", name, err)
		}
		created[name] = got
	}
	checkDurEdgeConverges(ctx, t, c, ns)

	c.StopCloud()
	before := stableDurEdgeList(ctx, t, c, ns)
	if _, err := strconv.ParseUint(before.ResourceVersion, 10, 64); err != nil {
		t.Fatalf("edge list RV %q: %v", before.ResourceVersion, err)
	}
	c.KillEdge()
	c.StartEdge()

	edge := c.EdgeClient()
	after, err := edge.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list through the restarted edge, cloud down: %v", err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("list RV after restart: got %s, want %s as before the kill", after.ResourceVersion, before.ResourceVersion)
	}
	if got, want := durConfigMapStates(after.Items), durConfigMapStates(before.Items); !maps.Equal(got, want) {
		t.Errorf("configmaps after restart:\ngot  %v\nwant %v", got, want)
	}
	checkDurResumes(t, c, ns, created["old"].ResourceVersion, map[string]watch.Event{
		"a": {Type: watch.Added, Object: created["a"]},
		"b": {Type: watch.Added, Object: created["b"]},
	})
	checkDurTooOld(ctx, t, c, ns, olderThanLogRV, "")

	w, err := edge.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatalf("watch through the edge from the pre-restart RV %s: %v", before.ResourceVersion, err)
	}
	defer w.Stop()

	c.StartCloud()
	want := changeDurAfterOutage(ctx, t, c, ns)
	checkDurWatchSees(t, w, before.ResourceVersion, want)
	checkDurEdgeConverges(ctx, t, c, ns)
}

// stableDurEdgeList lists ns through the edge until two lists durStableGap
// apart have the same RV, so no event in flight changes the state later.
func stableDurEdgeList(ctx context.Context, t *testing.T, c *framework.Cluster, ns string) *corev1.ConfigMapList {
	t.Helper()
	edge := c.EdgeClient()
	var prev *corev1.ConfigMapList
	for range 10 {
		list, err := edge.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list through the edge: %v", err)
		}
		if prev != nil && prev.ResourceVersion == list.ResourceVersion {
			return list
		}
		prev = list
		time.Sleep(durStableGap)
	}
	t.Fatalf("edge list RV kept moving with the cloud down, last %s", prev.ResourceVersion)
	return nil
}

// olderThanLogRV is older than any event log: the restarted edge's log
// starts at its first list of the cloud.
const olderThanLogRV = "1"

// checkDurResumes watches ns through the restarted edge from rv, inside
// its persisted event log, and wants exactly the events after rv, with
// nothing more while the cloud is down.
func checkDurResumes(t *testing.T, c *framework.Cluster, ns, rv string, want map[string]watch.Event) {
	t.Helper()
	w, err := c.EdgeClient().CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatalf("watch through the restarted edge from RV %s: %v", rv, err)
	}
	defer w.Stop()
	checkDurWatchSees(t, w, rv, want)
	if ev, err := nextDurEvent(w, durStableGap); !errors.Is(err, errDurNoEvent) {
		t.Errorf("watch from RV %s: got %s %v (%v) after the missed events, want nothing more", rv, ev.Type, ev.Object, err)
	}
}

// checkDurTooOld watches ns through the edge from rv, older than the
// restarted cache's oldest RV oldest ("" when not known), and wants
// exactly one 410 ERROR event and then the end of the stream.
func checkDurTooOld(ctx context.Context, t *testing.T, c *framework.Cluster, ns, rv, oldest string) {
	t.Helper()
	w, err := c.EdgeClient().CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatalf("watch through the edge from old RV %s: %v", rv, err)
	}
	defer w.Stop()
	ev, err := nextDurEvent(w, edgeSyncTimeout)
	if err != nil {
		t.Fatalf("watch from old RV %s: %v, want an ERROR event", rv, err)
	}
	st, isStatus := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !isStatus {
		t.Fatalf("watch from old RV %s: got %s %T, want an ERROR Status", rv, ev.Type, ev.Object)
	}
	wantMsg := fmt.Sprintf("too old resource version: %s (%s)", rv, oldest)
	msgOK := st.Message == wantMsg
	if oldest == "" {
		wantMsg = fmt.Sprintf("too old resource version: %s (", rv)
		msgOK = strings.HasPrefix(st.Message, wantMsg)
	}
	if st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || !msgOK {
		t.Errorf("watch from old RV %s: got code %d reason %s message %q, want 410 Expired %q",
			rv, st.Code, st.Reason, st.Message, wantMsg)
	}
	if ev, err := nextDurEvent(w, edgeSyncTimeout); !errors.Is(err, errDurStreamEnded) {
		t.Errorf("watch from old RV %s: got %s (%v) after the ERROR event, want the end of the stream", rv, ev.Type, err)
	}
}

// changeDurAfterOutage modifies b, deletes a and creates c in ns and returns
// the event each must cause, keyed by name; a deletion's object is the
// last state before it.
func changeDurAfterOutage(ctx context.Context, t *testing.T, c *framework.Cluster, ns string) map[string]watch.Event {
	t.Helper()
	cms := c.Admin.CoreV1().ConfigMaps(ns)
	lastA, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get configmap a: %v", err)
	}
	b, err := cms.Patch(ctx, "b", types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch configmap b: %v", err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap a: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"v": "1"}}
	added, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap c: %v", err)
	}
	return map[string]watch.Event{
		"b": {Type: watch.Modified, Object: b},
		"a": {Type: watch.Deleted, Object: lastA},
		"c": {Type: watch.Added, Object: added},
	}
}

// checkDurWatchSees is checkDurWatchSeqs with one wanted event per name.
func checkDurWatchSees(t *testing.T, w watch.Interface, fromRV string, want map[string]watch.Event) {
	t.Helper()
	seqs := make(map[string][]watch.Event, len(want))
	for name, ev := range want {
		seqs[name] = []watch.Event{ev}
	}
	checkDurWatchSeqs(t, w, fromRV, seqs)
}

// checkDurWatchSeqs reads events from w, which started at fromRV, until
// every wanted event arrived, each name's in order. Events must be ADDED,
// MODIFIED or DELETED with increasing RVs after fromRV: the deletes of one
// relist may share its RV, and so may the DELETED and ADDED of an object
// deleted and created again. Each must match its wanted event: same type,
// data, UID and, except for deletes (whose RV may be the relist's), the
// cloud's RV.
func checkDurWatchSeqs(t *testing.T, w watch.Interface, fromRV string, want map[string][]watch.Event) {
	t.Helper()
	total := 0
	for _, evs := range want {
		total += len(evs)
	}
	last, _ := strconv.ParseUint(fromRV, 10, 64)
	var prev watch.EventType
	prevName := ""
	seen := map[string]int{}
	for matched := 0; matched < total; {
		ev, err := nextDurEvent(w, restartEventTimeout)
		if err != nil {
			t.Fatalf("local watch from %s: %v; saw %v of %d wanted events", fromRV, err, seen, total)
		}
		cm, isCM := ev.Object.(*corev1.ConfigMap)
		if !isCM {
			t.Fatalf("local watch from %s: got %s %T (%v), want configmap events", fromRV, ev.Type, ev.Object, ev.Object)
		}
		rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		shared := ev.Type == watch.Deleted || (prev == watch.Deleted && prevName == cm.Name)
		if rv < last || (rv == last && !shared) {
			t.Errorf("local watch: %s %s rv %d after rv %d, want increasing RVs", ev.Type, cm.Name, rv, last)
		}
		last, prev, prevName = rv, ev.Type, cm.Name
		i := seen[cm.Name]
		if i >= len(want[cm.Name]) {
			t.Errorf("local watch: unexpected %s %s rv %d data %v", ev.Type, cm.Name, rv, cm.Data)
			continue
		}
		seen[cm.Name]++
		matched++
		checkDurEvent(t, ev.Type, cm, want[cm.Name][i])
	}
}

// checkDurEvent compares a received configmap event with the wanted one.
func checkDurEvent(t *testing.T, typ watch.EventType, got *corev1.ConfigMap, exp watch.Event) {
	t.Helper()
	wantCM := exp.Object.(*corev1.ConfigMap)
	if typ != exp.Type {
		t.Errorf("local watch: %s: got %s, want %s", got.Name, typ, exp.Type)
	}
	if !maps.Equal(got.Data, wantCM.Data) || got.UID != wantCM.UID {
		t.Errorf("local watch: %s %s: got data %v uid %s, want %v uid %s", typ, got.Name, got.Data, got.UID, wantCM.Data, wantCM.UID)
	}
	gotRV, _ := strconv.ParseUint(got.ResourceVersion, 10, 64)
	wantRV, _ := strconv.ParseUint(wantCM.ResourceVersion, 10, 64)
	switch {
	case exp.Type == watch.Deleted && gotRV <= wantRV:
		t.Errorf("local watch: DELETED %s rv %d, want after its last state's rv %d", got.Name, gotRV, wantRV)
	case exp.Type != watch.Deleted && gotRV != wantRV:
		t.Errorf("local watch: %s %s rv %d, want the cloud's %d", typ, got.Name, gotRV, wantRV)
	}
}

// Why nextDurEvent returned no event.
var (
	errDurStreamEnded = errors.New("watch stream ended")
	errDurNoEvent     = errors.New("no watch event in time")
)

// nextDurEvent returns w's next event, errDurStreamEnded if the stream
// ended, or errDurNoEvent if no event came within timeout.
func nextDurEvent(w watch.Interface, timeout time.Duration) (watch.Event, error) {
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return ev, errDurStreamEnded
		}
		return ev, nil
	case <-time.After(timeout):
		return watch.Event{}, errDurNoEvent
	}
}
