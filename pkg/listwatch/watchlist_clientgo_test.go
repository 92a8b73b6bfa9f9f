package listwatch

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/consistencydetector"
)

// requestRecorder records the query of every request a client sends.
type requestRecorder struct {
	mu      sync.Mutex
	queries []string // guarded by mu; in sending order
}

func (rr *requestRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		rr.mu.Lock()
		rr.queries = append(rr.queries, req.URL.RawQuery)
		rr.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (rr *requestRecorder) all() []string {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]string(nil), rr.queries...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An informer built with client-go's WatchListClient syncs through one
// WatchList request, with no LIST, and then follows changes on that stream.
// With the watch-list consistency detector on, client-go also LISTs at the
// synced RV with resourceVersionMatch=Exact and panics on a difference.
func TestClientGoInformerWatchList(t *testing.T) {
	for _, detector := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "consistency detector"}[detector], func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
			t.Cleanup(consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(detector))
			f := newFixture(t)
			srv := MustServer(t, Config{Caches: f.caches()})
			rec := &requestRecorder{}
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, WrapTransport: rec.wrap})
			if err != nil {
				t.Fatalf("clientset: %v", err)
			}
			inf := runPodInformer(t, cs)
			if got, want := inf.GetStore().ListKeys(), []string{"default/web-1", "kube-system/dns-1"}; !sameKeys(got, want) {
				t.Errorf("got keys %v after sync, want %v", got, want)
			}
			if rv := inf.LastSyncResourceVersion(); rv != "20" {
				t.Errorf("got last sync RV %q, want \"20\"", rv)
			}
			MustApply(t, f.pods, 21, watch.Added, podJSON("default", "new", 21, "node-a", "Pending", nil))
			waitForKeys(t, inf, []string{"default/new", "default/web-1", "kube-system/dns-1"})
			checkWatchListRequests(t, rec.all(), detector)
		})
	}
}

// runPodInformer runs an informer on node-a's pods until the test ends and
// returns it synced.
func runPodInformer(t *testing.T, cs kubernetes.Interface) cache.SharedIndexInformer {
	t.Helper()
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", "",
		fields.OneTermEqualSelector("spec.nodeName", "node-a"))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go inf.RunWithContext(ctx)
	syncCtx, syncCancel := context.WithTimeout(ctx, waitTimeout)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatalf("informer did not sync within %s", waitTimeout)
	}
	return inf
}

func waitForKeys(t *testing.T, inf cache.SharedIndexInformer, want []string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for got := inf.GetStore().ListKeys(); !sameKeys(got, want); got = inf.GetStore().ListKeys() {
		if time.Now().After(deadline) {
			t.Fatalf("got keys %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkWatchListRequests checks that the informer sent exactly one request,
// a WatchList, plus with the detector one exact LIST at the synced RV.
func checkWatchListRequests(t *testing.T, queries []string, detector bool) {
	t.Helper()
	var watches, lists []string
	for _, q := range queries {
		if strings.Contains(q, "watch=true") {
			watches = append(watches, q)
		} else {
			lists = append(lists, q)
		}
	}
	if len(watches) != 1 || !strings.Contains(watches[0], "sendInitialEvents=true") {
		t.Errorf("got watches %q, want one WatchList request", watches)
	}
	switch {
	case !detector && len(lists) != 0:
		t.Errorf("got LIST requests %q, want none", lists)
	case detector && (len(lists) != 1 || !strings.Contains(lists[0], "resourceVersion=20") ||
		!strings.Contains(lists[0], "resourceVersionMatch=Exact")):
		t.Errorf("got LIST requests %q, want one exact LIST at RV 20 from the detector", lists)
	}
}
