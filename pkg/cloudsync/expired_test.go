package cloudsync

import (
	"sync"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A start whose resumed watch the cloud expires (a cloud restarted while
// the daemon was down) relists at once, as every read of a start goes;
// a 410 to a watch that had delivered (every node's watches expired by a
// cloud restart at once) relists only after a delay within the relist
// window, on the injected clock.
func TestStartRelistsAtOnceAfter410(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	seedSynced(t, e, 10)
	clk := linktest.NewRecClock()
	var mu sync.Mutex
	var watches []*watch.FakeWatcher
	e.lw.watch = func(metav1.ListOptions) (watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(watches) == 0 {
			watches = append(watches, nil)
			return expiredWatch(), nil
		}
		fw := watch.NewFakeWithChanSize(4, false)
		watches = append(watches, fw)
		return fw, nil
	}
	e.lw.list = func(metav1.ListOptions) (runtime.Object, error) { return cmList(20, cm("a", "one", 10, "x")), nil }
	runSyncer(t, e, e.store, clk, linktest.Up(t))

	// The clock never moves: a relist waiting for a delay would not come.
	mustWaitWatermark(t, e, 20)
	if lists, _ := e.lw.recorded(); lists != 1 {
		t.Fatalf("LISTs after the start's 410: got %d, want 1", lists)
	}
	live := func() *watch.FakeWatcher {
		mu.Lock()
		defer mu.Unlock()
		return watches[len(watches)-1]
	}
	linktest.WaitFor(t, "the watch after the relist", func() bool { return live() != nil })
	live().Modify(cm("a", "one", 21, "y"))
	mustWaitWatermark(t, e, 21)

	mustRelistAfterDelay(t, e, clk, live(), 1)
}

// A start's resumed watch that delivered before the cloud expired it met
// a cloud restart every node hears at once: its relist waits for a delay
// within the relist window.
func TestStartWatchThatDeliveredWaitsAfter410(t *testing.T) {
	e := mustEnv(t, t.TempDir())
	seedSynced(t, e, 10)
	clk := linktest.NewRecClock()
	cloud := &flakyCloud{watches: make(chan *watch.FakeWatcher, 8)}
	e.lw.watch = cloud.watch
	e.lw.list = func(o metav1.ListOptions) (runtime.Object, error) {
		if o.Limit == 1 {
			return cmList(11), nil // the resume's check of the cloud's RV
		}
		return cmList(20, cm("a", "one", 11, "y")), nil
	}
	runSyncer(t, e, e.store, clk, linktest.Up(t))
	fw := <-cloud.watches
	fw.Modify(cm("a", "one", 11, "y"))
	mustWaitWatermark(t, e, 11)
	lists, _ := e.lw.recorded()
	mustRelistAfterDelay(t, e, clk, fw, lists)
}

// mustRelistAfterDelay expires fw and checks that the syncer's next LIST
// (lists made so far) waits for a delay within the relist window.
func mustRelistAfterDelay(t *testing.T, e *env, clk *linktest.RecClock, fw *watch.FakeWatcher, lists int) {
	t.Helper()
	before := len(clk.Timers())
	expired := apierrors.NewResourceExpired("too old resource version: 21 (30)").ErrStatus
	fw.Error(&expired)
	clk.MustReadAfterRelistDelay(t, before, func() int { n, _ := e.lw.recorded(); return n }, lists)
}
