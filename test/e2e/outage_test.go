//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Objects of the outage scenario, all labelled outageLabel in outageNS.
const (
	outageNS    = "outage"
	outageLabel = "app=outage"
	outagePod   = "outage-pod" // bound to the edge node
	keptCM      = "kept"       // updated after the cloud returns
	doomedCM    = "doomed"     // deleted after the cloud returns
	returnCM    = "returned"   // created as soon as the cloud returns
)

const (
	// cloudLinkTimeout bounds how long the edge may take to see the cloud
	// go away or come back: its retry backoff is capped at 30 s plus 50%
	// jitter.
	cloudLinkTimeout = 90 * time.Second
	// reconnectDelivery is how soon a cloud change must reach local
	// watchers once the edge is connected again.
	reconnectDelivery = 10 * time.Second
	// rawRequestTimeout bounds one raw HTTP request to the edge.
	rawRequestTimeout = 30 * time.Second
	// watchSettle is how long a watch opened during the outage must stay
	// free of ERROR events; the edge sends 410 at once if it has to.
	watchSettle = 2 * time.Second
	// linkPollInterval is how often waitCloudLink reads /readyz?verbose.
	linkPollInterval = 250 * time.Millisecond
)

// TestCloudOutage stops kube-apiserver under a running edge, checks that
// reads and watches keep serving the last state while writes get 503, then
// restarts it and checks that cloud changes reach watchers that were opened
// before and during the outage, without 410.
func TestCloudOutage(t *testing.T) {
	c := framework.New(t, framework.Options{Namespaces: []string{outageNS}})
	seedOutage(t, c)
	c.StartEdge()
	edge := c.EdgeClient()
	ctx := t.Context()
	var before edgeSnapshot
	if _, err := eventually(ctx, edgeSyncTimeout, func() (string, error) {
		var err error
		if before, err = takeSnapshot(ctx, edge, c.NodeName); err == nil && (len(before.cms) != 2 || len(before.pods) != 1) {
			err = fmt.Errorf("edge not synced yet: %+v", before)
		}
		return "", err
	}); err != nil {
		t.Fatalf("initial sync: %v", err)
	}
	preOutage := startLocalWatch(ctx, edge, outageNS, before.cmListRV)
	waitWatchOpened(t, preOutage)

	c.StopCloud()
	waitCloudLink(t, c, "disconnected")
	var duringOutage *localWatcher
	t.Run("reads", func(t *testing.T) {
		duringOutage = testOutageReads(t, ctx, c, edge, before, preOutage)
	})
	t.Run("writes", func(t *testing.T) { testOutageWrites(t, c) })
	t.Run("readyz", func(t *testing.T) {
		if body := edgeGetText(t, c.EdgeURL+"/readyz"); body != "ok" {
			t.Errorf("/readyz during the outage: got %q, want ok", body)
		}
		if body := edgeGetText(t, c.EdgeURL+"/readyz?verbose"); !strings.Contains(body, "cloud-link: disconnected ") {
			t.Errorf("/readyz?verbose during the outage: no cloud-link: disconnected line in:\n%s", body)
		}
	})
	if duringOutage == nil {
		t.Fatalf("no watch could be opened during the outage")
	}
	t.Run("reconnect", func(t *testing.T) {
		testReconnect(t, c, map[string]*localWatcher{"pre-outage": preOutage, "during-outage": duringOutage})
	})
}

// seedOutage creates the scenario's configmaps and pod in the cloud.
func seedOutage(t *testing.T, c *framework.Cluster) {
	t.Helper()
	ctx, core := t.Context(), c.Admin.CoreV1()
	labels := map[string]string{"app": "outage"}
	for _, name := range []string{keptCM, doomedCM} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"v": "1"}}
		if err := createIn(ctx, core.ConfigMaps(outageNS), cm); err != nil {
			t.Fatalf("seed configmap %s: %v", name, err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: outagePod, Labels: labels}, Spec: corev1.PodSpec{
		NodeName: c.NodeName, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	if err := createIn(ctx, core.Pods(outageNS), pod); err != nil {
		t.Fatalf("seed pod: %v", err)
	}
}

// edgeSnapshot is what reads through the edge return at one moment.
type edgeSnapshot struct {
	keptRV, podRV       string            // GET
	cms, pods           map[string]string // LIST with selectors: RV by name
	cmListRV, podListRV string
}

func takeSnapshot(ctx context.Context, edge kubernetes.Interface, node string) (edgeSnapshot, error) {
	var s edgeSnapshot
	kept, err := edge.CoreV1().ConfigMaps(outageNS).Get(ctx, keptCM, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get configmap: %w", err)
	}
	pod, err := edge.CoreV1().Pods(outageNS).Get(ctx, outagePod, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get pod: %w", err)
	}
	s.keptRV, s.podRV = kept.ResourceVersion, pod.ResourceVersion
	cms, err := edge.CoreV1().ConfigMaps(outageNS).List(ctx, metav1.ListOptions{LabelSelector: outageLabel})
	if err != nil {
		return s, fmt.Errorf("list configmaps: %w", err)
	}
	pods, err := edge.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: outageLabel, FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return s, fmt.Errorf("list pods: %w", err)
	}
	s.cms, s.pods = map[string]string{}, map[string]string{}
	for _, cm := range cms.Items {
		s.cms[cm.Name] = cm.ResourceVersion
	}
	for _, p := range pods.Items {
		s.pods[p.Name] = p.ResourceVersion
	}
	s.cmListRV, s.podListRV = cms.ResourceVersion, pods.ResourceVersion
	return s, nil
}

// testOutageReads checks GET, LIST and watches against the pre-outage state
// and returns a watcher opened during the outage that runs until watchCtx
// ends.
func testOutageReads(t *testing.T, watchCtx context.Context, c *framework.Cluster, edge kubernetes.Interface,
	before edgeSnapshot, pre *localWatcher) *localWatcher {
	during, err := takeSnapshot(t.Context(), edge, c.NodeName)
	if err != nil {
		t.Fatalf("read through the edge during the outage: %v", err)
	}
	// A cloud bookmark that lands just before the stop may advance the list
	// RVs; the objects and their RVs must be exactly the pre-outage ones.
	if !sameObjects(during, before) || !notOlder(during.cmListRV, before.cmListRV) || !notOlder(during.podListRV, before.podListRV) {
		t.Errorf("reads during the outage: got %+v, want the pre-outage %+v", during, before)
	}
	again, err := takeSnapshot(t.Context(), edge, c.NodeName)
	if err != nil || !reflect.DeepEqual(again, during) {
		t.Errorf("second read during the outage: got %+v (%v), want the same %+v", again, err, during)
	}
	w := startLocalWatch(watchCtx, edge, outageNS, before.cmListRV)
	waitWatchOpened(t, w)
	time.Sleep(watchSettle)
	for name, lw := range map[string]*localWatcher{"pre-outage": pre, "during-outage": w} {
		if p := lw.Problems(); len(p) > 0 {
			t.Errorf("%s watch during the outage: %v", name, p)
		}
		if ev := lw.Events(); len(ev) > 0 {
			t.Errorf("%s watch during the outage: got events %s, want none", name, describeEvents(ev))
		}
	}
	t.Logf("pre-outage watch opened %d time(s) so far", pre.Opens())
	return w
}

// testOutageWrites checks that writes get 503 with a retry hint.
func testOutageWrites(t *testing.T, c *framework.Cluster) {
	base := c.EdgeURL + "/api/v1/namespaces/" + outageNS
	writes := []struct{ name, method, url, contentType, body string }{
		{"create configmap", http.MethodPost, base + "/configmaps", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"during-outage"}}`},
		{"patch pod status", http.MethodPatch, base + "/pods/" + outagePod + "/status", "application/merge-patch+json",
			`{"status":{"phase":"Running"}}`},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			resp, body := edgeRawRequest(t, w.method, w.url, w.contentType, w.body)
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("got %s: %s, want 503", resp.Status, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
			if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra <= 0 {
				t.Errorf("Retry-After: got %q, want a positive number of seconds", resp.Header.Get("Retry-After"))
			}
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("decode Status: %v: %s", err, body)
			}
			if st.Kind != "Status" || st.Status != metav1.StatusFailure || st.Code != http.StatusServiceUnavailable ||
				st.Reason != metav1.StatusReasonServiceUnavailable {
				t.Errorf("got Status %s, want kind Status, status Failure, code 503, reason ServiceUnavailable", body)
			}
		})
	}
}

// testReconnect restarts the cloud and checks that a create made at once,
// then an update and a delete made once the edge is connected, reach every
// watcher within reconnectDelivery, without ERROR events.
func testReconnect(t *testing.T, c *framework.Cluster, watchers map[string]*localWatcher) {
	ctx, cms := t.Context(), c.Admin.CoreV1().ConfigMaps(outageNS)
	c.StartCloud()
	cloudBack := time.Now()
	returned, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: returnCM}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s in the cloud: %v", returnCM, err)
	}
	connected := waitCloudLink(t, c, "connected")
	t.Logf("edge reconnected %s after the cloud was ready", connected.Sub(cloudBack).Round(100*time.Millisecond))
	waitWatchersGot(t, watchers, watch.Added, returnCM, returned.ResourceVersion, connected)

	kept, err := cms.Get(ctx, keptCM, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s from the cloud: %v", keptCM, err)
	}
	kept.Data["v"] = "2"
	if kept, err = cms.Update(ctx, kept, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update %s in the cloud: %v", keptCM, err)
	}
	waitWatchersGot(t, watchers, watch.Modified, keptCM, kept.ResourceVersion, time.Now())
	if err := cms.Delete(ctx, doomedCM, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s in the cloud: %v", doomedCM, err)
	}
	waitWatchersGot(t, watchers, watch.Deleted, doomedCM, "", time.Now())
	for name, w := range watchers {
		if p := w.Problems(); len(p) > 0 {
			t.Errorf("%s watch: got %v, want no ERROR events or failed re-watches", name, p)
		}
		if err := checkIncreasing(w.Events()); err != nil {
			t.Errorf("%s watch: %v", name, err)
		}
		t.Logf("%s watch: %d open(s), events %s", name, w.Opens(), describeEvents(w.Events()))
	}
}

// waitWatchersGot waits until every watcher got the event, at most reconnectDelivery
// after since.
func waitWatchersGot(t *testing.T, watchers map[string]*localWatcher, typ watch.EventType, name, rv string, since time.Time) {
	t.Helper()
	for wname, w := range watchers {
		if _, err := w.waitEvent(t.Context(), typ, name, rv, time.Until(since.Add(reconnectDelivery))); err != nil {
			t.Fatalf("%s watch: %v (problems: %v)", wname, err, w.Problems())
		}
	}
}

func waitWatchOpened(t *testing.T, w *localWatcher) {
	t.Helper()
	select {
	case <-w.opened:
	case <-time.After(edgeSyncTimeout):
		t.Fatalf("local watch did not open within %s: %v", edgeSyncTimeout, w.Problems())
	}
}

// waitCloudLink waits until /readyz?verbose reports the cloud link in
// state, and returns when it did.
func waitCloudLink(t *testing.T, c *framework.Cluster, state string) time.Time {
	t.Helper()
	want := "cloud-link: " + state + " "
	deadline := time.Now().Add(cloudLinkTimeout)
	for {
		body := edgeGetText(t, c.EdgeURL+"/readyz?verbose")
		if strings.Contains(body, want) && strings.Contains(body, "readyz check passed") {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz?verbose: no %q line within %s in:\n%s", strings.TrimSpace(want), cloudLinkTimeout, body)
		}
		time.Sleep(linkPollInterval)
	}
}

// edgeGetText GETs url from the edge and wants 200.
func edgeGetText(t *testing.T, url string) string {
	t.Helper()
	resp, body := edgeRawRequest(t, http.MethodGet, url, "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got %s: %s, want 200", url, resp.Status, body)
	}
	return string(body)
}

// edgeRawRequest sends one request to the edge and returns the response with
// its body read.
func edgeRawRequest(t *testing.T, method, url, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rawRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, data
}

// sameObjects compares the objects two snapshots returned, ignoring list RVs.
func sameObjects(a, b edgeSnapshot) bool {
	return a.keptRV == b.keptRV && a.podRV == b.podRV && reflect.DeepEqual(a.cms, b.cms) && reflect.DeepEqual(a.pods, b.pods)
}

// notOlder reports whether resourceVersion a is at least b.
func notOlder(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x >= y
}
