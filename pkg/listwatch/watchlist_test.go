package listwatch

import (
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// watchListQuery is what client-go's reflector sends with WatchListClient.
const watchListQuery = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"

// initialEventsEnd is the bookmark that ends a WatchList's initial pods.
func initialEventsEnd(rv string) string {
	return `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"` + rv +
		`","annotations":{"` + metav1.InitialEventsAnnotationKey + `":"true"}}}}`
}

// Invalid combinations get kube-apiserver's 422 with the WatchList gate on.
func TestWatchListValidation(t *testing.T) {
	f := newFixture(t)
	srv := MustServer(t, Config{Caches: f.caches()})
	for _, tc := range []struct{ query, field string }{
		{"watch=true&sendInitialEvents=true", "resourceVersionMatch"},
		{"watch=true&sendInitialEvents=false", "resourceVersionMatch"},
		{"watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=20", "resourceVersionMatch"},
		{"watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1", "resourceVersionMatch"},
		{"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=1", "sendInitialEvents"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := MustGet(t, srv.URL+"/api/v1/pods?"+tc.query)
			st := MustStatus(t, r)
			if r.code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid {
				t.Fatalf("got %d %s, want 422 Invalid", r.code, st.Reason)
			}
			if st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" ||
				len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field {
				t.Errorf("got details %+v, want kind ListOptions group meta.k8s.io, first cause on %s", st.Details, tc.field)
			}
		})
	}
}

// A WatchList sends the state, one annotated bookmark at the snapshot RV
// (also when nothing matches), then live events.
func TestWatchListSendsStateBookmarkThenChanges(t *testing.T) {
	for _, tc := range []struct {
		name, path, query string
		initial           []string
		bookmark          bool
	}{
		{"rv unset", "/api/v1/namespaces/default/pods", watchListQuery,
			[]string{"ADDED default/web-1 11", "ADDED default/web-2 12"}, true},
		{"rv 0", "/api/v1/namespaces/default/pods", watchListQuery + "&resourceVersion=0",
			[]string{"ADDED default/web-1 11", "ADDED default/web-2 12"}, true},
		{"rv reached", "/api/v1/namespaces/default/pods", watchListQuery + "&resourceVersion=15",
			[]string{"ADDED default/web-1 11", "ADDED default/web-2 12"}, true},
		{"no objects", "/api/v1/namespaces/empty/pods", watchListQuery, nil, true},
		{"without bookmarks", "/api/v1/namespaces/default/pods",
			"watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
			[]string{"ADDED default/web-1 11", "ADDED default/web-2 12"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			srv := MustServer(t, Config{Caches: f.caches()})
			wc := MustWatch(t, srv.URL+tc.path+"?"+tc.query)
			if wc.resp.StatusCode != http.StatusOK {
				t.Fatalf("got status %d, want 200", wc.resp.StatusCode)
			}
			checkFrames(t, wc.MustFrames(t, len(tc.initial)), tc.initial)
			if tc.bookmark {
				if got, want := wc.MustFrame(t), initialEventsEnd("20"); got != want {
					t.Errorf("got %s, want %s", got, want)
				}
			}
			MustApply(t, f.pods, 21, watch.Added, podJSON("empty", "p", 21, "node-a", "Running", nil))
			MustApply(t, f.pods, 22, watch.Added, podJSON("default", "p", 22, "node-a", "Running", nil))
			want := "ADDED default/p 22"
			if tc.path == "/api/v1/namespaces/empty/pods" {
				want = "ADDED empty/p 21"
			}
			checkFrames(t, wc.MustFrames(t, 1), []string{want})
		})
	}
}

// A WatchList from an RV the cache has not reached waits for it and sends
// the state at least that new.
func TestWatchListWaitsForResourceVersion(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	done := make(chan *watchClient, 1)
	go func() {
		done <- MustWatch(t, srv.URL+"/api/v1/namespaces/default/pods?"+watchListQuery+"&resourceVersion=22")
	}()
	waitForWaiters(t, fc, 1) // the too-large-RV timer: the handler waits
	MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-a", "Running", nil))
	MustApply(t, f.pods, 22, watch.Added, podJSON("default", "web-3", 22, "node-a", "Running", nil))
	var wc *watchClient
	select {
	case wc = <-done:
	case <-time.After(waitTimeout):
		t.Fatalf("watch did not start within %s", waitTimeout)
	}
	checkFrames(t, wc.MustFrames(t, 3), []string{"ADDED default/web-1 21", "ADDED default/web-2 12", "ADDED default/web-3 22"})
	if got, want := wc.MustFrame(t), initialEventsEnd("22"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// A WatchList from an RV the cache does not reach within tooLargeRVWait
// gets 200 and one ERROR event carrying kube's too-large-RV 504.
func TestWatchListTooLargeResourceVersion(t *testing.T) {
	f := newFixture(t)
	fc := clocktesting.NewFakeClock(time.Now())
	srv := MustServer(t, Config{Caches: f.caches(), Clock: fc})
	done := make(chan *watchClient, 1)
	go func() { done <- MustWatch(t, srv.URL+"/api/v1/pods?"+watchListQuery+"&resourceVersion=99") }()
	waitForWaiters(t, fc, 1)
	fc.Step(tooLargeRVWait)
	wc := <-done
	if wc.resp.StatusCode != http.StatusOK {
		t.Fatalf("got status %d, want 200", wc.resp.StatusCode)
	}
	want := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
		`"message":"Timeout: Too large resource version: 99, current: 20","reason":"Timeout","details":{"causes":` +
		`[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}}`
	if got := wc.MustFrame(t); got != want {
		t.Errorf("got frame %s, want %s", got, want)
	}
	wc.MustEnd(t)
}

// sendInitialEvents=false sends no state: RV unset or 0 starts from now,
// RV N replays the changes after N; no bookmark is annotated.
func TestWatchWithoutInitialEvents(t *testing.T) {
	const query = "watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
	for _, tc := range []struct{ name, rv string }{{"rv unset", ""}, {"rv 0", "0"}, {"rv 21", "21"}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			MustApply(t, f.pods, 21, watch.Modified, podJSON("default", "web-1", 21, "node-a", "Running", nil))
			srv := MustServer(t, Config{Caches: f.caches()})
			url := srv.URL + "/api/v1/pods?" + query
			if tc.rv != "" {
				url += "&resourceVersion=" + tc.rv
			}
			wc := MustWatch(t, url)
			MustApply(t, f.pods, 22, watch.Modified, podJSON("default", "web-2", 22, "node-a", "Running", nil))
			checkFrames(t, wc.MustFrames(t, 1), []string{"MODIFIED default/web-2 22"})
		})
	}
}
