package listwatch

import (
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// MustFrames reads n frames and returns their type/namespace/name/RV.
func (wc *watchClient) MustFrames(t testing.TB, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		f := MustDecodeFrame(t, wc.MustFrame(t))
		m := f.Object.Metadata
		out = append(out, f.Type+" "+m.Namespace+"/"+m.Name+" "+m.ResourceVersion)
	}
	return out
}

func checkFrames(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got frames %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("got frame %d %q, want %q", i, got[i], want[i])
		}
	}
}

func TestWatchSendsStateThenChanges(t *testing.T) {
	for _, query := range []string{"watch=true", "watch=1", "watch=true&resourceVersion=0"} {
		t.Run(query, func(t *testing.T) {
			f := newFixture(t)
			srv := MustServer(t, Config{Caches: f.caches()})
			wc := MustWatch(t, srv.URL+"/api/v1/namespaces/default/pods?"+query)
			if wc.resp.StatusCode != http.StatusOK || wc.resp.Header.Get("Content-Type") != response.MediaTypeJSON {
				t.Fatalf("got %d %q, want 200 %q", wc.resp.StatusCode, wc.resp.Header.Get("Content-Type"), response.MediaTypeJSON)
			}
			checkFrames(t, wc.MustFrames(t, 2), []string{"ADDED default/web-1 11", "ADDED default/web-2 12"})
			MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-2", 21, "node-b", "Succeeded", nil))
			MustApply(t, f.pods, 22, watch.Added, podJSON("kube-system", "other", 22, "node-a", "Running", nil))
			MustApply(t, f.pods, 23, watch.Deleted, podJSON("default", "web-1", 23, "node-a", "Running", nil))
			checkFrames(t, wc.MustFrames(t, 2), []string{"MODIFIED default/web-2 21", "DELETED default/web-1 23"})
		})
	}
}

func TestWatchFromResourceVersion(t *testing.T) {
	f := newFixture(t)
	MustApply(t, f.configMaps, 21, watch.Modified, configMapJSON("default", "settings", 21, map[string]string{"mode": "a"}))
	MustApply(t, f.configMaps, 22, watch.Modified, configMapJSON("default", "settings", 22, map[string]string{"mode": "b"}))
	srv := MustServer(t, Config{Caches: f.caches()})
	wc := MustWatch(t, srv.URL+"/api/v1/configmaps?watch=true&resourceVersion=21")
	checkFrames(t, wc.MustFrames(t, 1), []string{"MODIFIED default/settings 22"})
	MustApply(t, f.configMaps, 23, watch.Added, configMapJSON("kube-system", "new", 23, nil))
	frames := wc.MustFrames(t, 1)
	checkFrames(t, frames, []string{"ADDED kube-system/new 23"})
}

// Objects entering and leaving a field selector arrive as ADDED and DELETED,
// as the kubelet's spec.nodeName watch needs.
func TestWatchWithFieldSelector(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	wc := MustWatch(t, srv.URL+"/api/v1/pods?watch=true&resourceVersion=20&fieldSelector=spec.nodeName%3Dnode-b")
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-b", "Running", nil))
	MustApply(t, f.pods, 22, watch.Modified, podJSON("kube-system", "dns-1", 22, "node-a", "Running", nil))
	MustApply(t, f.pods, 23, watch.Modified, podJSON("default", "web-2", 23, "node-c", "Running", nil))
	checkFrames(t, wc.MustFrames(t, 2), []string{"ADDED default/web-1 21", "DELETED default/web-2 23"})
}

func TestWatchTooOldResourceVersion(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	wc := MustWatch(t, srv.URL+"/api/v1/pods?watch=true&resourceVersion=5")
	if wc.resp.StatusCode != http.StatusOK {
		t.Fatalf("got status %d, want 200", wc.resp.StatusCode)
	}
	want := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (20)","reason":"Expired","code":410}}`
	if got := wc.MustFrame(t); got != want {
		t.Errorf("got frame %s, want %s", got, want)
	}
	wc.MustEnd(t)
}

func bookmarkFrame(kind, rv string) string {
	return `{"type":"BOOKMARK","object":{"kind":"` + kind + `","apiVersion":"v1","metadata":{"resourceVersion":"` + rv + `"}}}`
}

// Bookmarks come every bookmarkInterval and bookmarkBeforeTimeout before
// the deadline, carry the newest RV reached, and, as in kube, only once
// that RV is above the watch's start.
func TestWatchBookmarks(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	wc := MustWatch(t, srv.URL+"/api/v1/pods?watch=true&resourceVersion=20&allowWatchBookmarks=true&timeoutSeconds=200")
	waitForWaiters(t, fc, 2) // the timeout and the first bookmark
	fc.Step(bookmarkInterval)
	waitForWaiters(t, fc, 2) // at 60 s nothing is newer than 20: no bookmark
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-a", "Running", nil))
	checkFrames(t, wc.MustFrames(t, 1), []string{"MODIFIED default/web-1 21"})
	fc.Step(bookmarkInterval) // at 120 s
	if got, want := wc.MustFrame(t), bookmarkFrame("Pod", "21"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// A progress marker is not written but advances the bookmark RV.
	if err := f.pods.Apply(nil, 30); err != nil {
		t.Fatalf("Apply progress: %v", err)
	}
	waitForWaiters(t, fc, 2)
	fc.Step(bookmarkInterval) // at 180 s
	if got, want := wc.MustFrame(t), bookmarkFrame("Pod", "30"); got != want {
		t.Errorf("got %s, want %s (the progress marker's RV)", got, want)
	}
	// The last bookmark comes bookmarkBeforeTimeout before the deadline,
	// sooner than the next heartbeat.
	waitForWaiters(t, fc, 2)
	fc.Step(200*time.Second - 3*bookmarkInterval - bookmarkBeforeTimeout)
	if got, want := wc.MustFrame(t), bookmarkFrame("Pod", "30"); got != want {
		t.Errorf("got %s, want %s before the timeout", got, want)
	}
	fc.Step(bookmarkBeforeTimeout)
	wc.MustEnd(t)
}

// A watch whose selector filters out every change still bookmarks the
// cache's RV, after writing the matching events queued before it.
func TestWatchBookmarkCarriesCacheRV(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	wc := MustWatch(t, srv.URL+"/api/v1/pods?watch=true&resourceVersion=20&allowWatchBookmarks=true&fieldSelector=spec.nodeName%3Dnode-a")
	waitForWaiters(t, fc, 2)
	MustApply(t, f.pods, 21, watch.Added, podJSON("default", "on-b", 21, "node-b", "Running", nil))
	MustApply(t, f.pods, 22, watch.Added, podJSON("default", "on-a", 22, "node-a", "Running", nil))
	MustApply(t, f.pods, 23, watch.Added, podJSON("default", "on-b2", 23, "node-b", "Running", nil))
	fc.Step(bookmarkInterval)
	checkFrames(t, wc.MustFrames(t, 1), []string{"ADDED default/on-a 22"})
	if got, want := wc.MustFrame(t), bookmarkFrame("Pod", "23"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestWatchTimeoutEndsCleanly(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	// Without allowWatchBookmarks no bookmark is ever written.
	wc := MustWatch(t, srv.URL+"/api/v1/nodes?watch=true&resourceVersion=20&timeoutSeconds=90")
	waitForWaiters(t, fc, 1)
	fc.Step(89 * time.Second)
	MustApply(t, f.nodes, 21, watch.Modified, nodeJSON("node-a", 21, true))
	checkFrames(t, wc.MustFrames(t, 1), []string{"MODIFIED /node-a 21"})
	fc.Step(time.Second)
	wc.MustEnd(t)
}

func TestWatchDefaultTimeout(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	wc := MustWatch(t, srv.URL+"/api/v1/nodes?watch=true&resourceVersion=20")
	waitForWaiters(t, fc, 1)
	fc.Step(2 * defaultWatchTimeout)
	wc.MustEnd(t)
}

func TestWatchEndsWhenCacheCloses(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	wc := MustWatch(t, srv.URL+"/api/v1/pods?watch=true")
	checkFrames(t, wc.MustFrames(t, 3), []string{"ADDED default/web-1 11", "ADDED default/web-2 12", "ADDED kube-system/dns-1 13"})
	f.pods.Close()
	wc.MustEnd(t)
	r := MustGet(t, srv.URL+"/api/v1/pods?watch=true")
	if st := MustStatus(t, r); r.code != http.StatusServiceUnavailable {
		t.Errorf("got %d %s after close, want 503", r.code, st.Message)
	}
}

func TestNextBookmarkTime(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		deadline time.Duration
		want     time.Duration
		wantOK   bool
	}{
		{"far deadline", time.Hour, bookmarkInterval, true},
		{"deadline within a minute", 30 * time.Second, 28 * time.Second, true},
		{"at the last bookmark", bookmarkBeforeTimeout, 0, false},
		{"shorter than the lead", time.Second, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := nextBookmarkTime(now, now.Add(tt.deadline))
			if ok != tt.wantOK || (ok && got.Sub(now) != tt.want) {
				t.Errorf("got %v %v, want %v %v", got.Sub(now), ok, tt.want, tt.wantOK)
			}
		})
	}
}

// A watch from an RV the cache has not reached yet gets no bookmark until
// the cache passes that RV.
func TestWatchBookmarkFromFutureRV(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	wc := MustWatch(t, srv.URL+"/api/v1/nodes?watch=true&resourceVersion=25&allowWatchBookmarks=true")
	waitForWaiters(t, fc, 2)
	fc.Step(bookmarkInterval)
	waitForWaiters(t, fc, 2)
	MustApply(t, f.nodes, 25, watch.Modified, nodeJSON("node-a", 25, true))
	MustApply(t, f.nodes, 26, watch.Modified, nodeJSON("node-b", 26, true))
	checkFrames(t, wc.MustFrames(t, 1), []string{"MODIFIED /node-b 26"})
	fc.Step(bookmarkInterval)
	if got, want := wc.MustFrame(t), bookmarkFrame("Node", "26"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
