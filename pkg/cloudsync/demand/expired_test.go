package demand

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// A start whose resumed watch the cloud expires before it delivered
// anything (a cloud restarted while the daemon was down) reads the object
// again at once, as every read of a start goes; one that delivered first
// met a cloud restart every node hears at once, and reads it again only
// after a delay within the relist window, on the injected clock.
func TestDemandStartRereadsAtOnceAfter410(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	watches := func(n int) func() bool {
		return func() bool { _, rvs := cloud.asks(key); return len(rvs) == n }
	}
	fake := clocktesting.NewFakeClock(time.Now())
	stop := runHolderWith(t, l, cloud, fake)
	waitFor(t, "the first watch", watches(1))
	cloud.watchOf(key).Action(watch.Bookmark, namedObject("Secret", "ns", "used", 45, ""))
	waitFor(t, "the bookmark's resume point written", func() bool {
		fake.Step(resumeFlush)
		data, err := l.store.GetMeta(context.Background(), resumeMetaKey)
		return err == nil && string(data) == `{"secret/ns/used":45}`
	})
	stop()
	expire := func() {
		cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	}

	// The clock never moves: a read waiting for a delay would not come.
	_, rvs := cloud.asks(key)
	stop = runHolderWith(t, l, cloud, linktest.NewRecClock())
	waitFor(t, "the resumed watch", watches(len(rvs)+1))
	expire()
	waitFor(t, "the read after the start's 410", watches(len(rvs)+2))
	if _, got := cloud.asks(key); got[len(got)-1] != "stream>=45" {
		t.Errorf("after the start's 410: got watches from %v, want the last a streaming watch not older than 45", got)
	}
	stop()

	_, rvs = cloud.asks(key)
	clk := linktest.NewRecClock()
	stop = runHolderWith(t, l, cloud, clk)
	defer stop()
	waitFor(t, "the resumed watch", watches(len(rvs)+1))
	cloud.watchOf(key).Action(watch.Bookmark, namedObject("Secret", "ns", "used", 50, ""))
	before := len(clk.Timers())
	expire()
	clk.MustReadAfterRelistDelay(t, before, func() int { _, got := cloud.asks(key); return len(got) }, len(rvs)+1,
		resumeFlush, resumeFlushListed, heardEvery)
}

// A start's resume the cloud answers 410 says the restarted cloud's watch
// cache starts above its point: a resume of the same kind from a point not
// above it, still waiting for its place, is dropped unsent and its object
// read again at once (the clock never moves); one from a newer point is
// sent.
func TestDemandStartDropsResumesNotAboveExpired(t *testing.T) {
	const a, b = "secrets/ns/a", "secrets/ns/b"
	for _, tc := range []struct {
		name  string
		point uint64 // b's stored point; a's is 45
		want  string // b's first watch on the start
	}{
		{name: "older point dropped", point: 40, want: "stream>=40"},
		{name: "same point dropped", point: 45, want: "stream>=45"},
		{name: "newer point sent", point: 50, want: "50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLocal(t, secretVolume("a"), secretVolume("b"))
			cloud := newResumeCloud()
			cloud.listRV = 30
			cloud.objs = map[string]*unstructured.Unstructured{
				a: namedObject("Secret", "ns", "a", 10, "x"), b: namedObject("Secret", "ns", "b", 10, "y")}
			fake := clocktesting.NewFakeClock(time.Now())
			stop := runHolderWith(t, l, cloud, fake)
			waitFor(t, "both watches", func() bool { return cloud.watchOf(a) != nil && cloud.watchOf(b) != nil })
			cloud.watchOf(a).Action(watch.Bookmark, namedObject("Secret", "ns", "a", 45, ""))
			cloud.watchOf(b).Action(watch.Bookmark, namedObject("Secret", "ns", "b", tc.point, ""))
			want := fmt.Sprintf(`{"secret/ns/a":45,"secret/ns/b":%d}`, tc.point)
			waitFor(t, "both resume points written", func() bool {
				fake.Step(resumeFlush)
				data, err := l.store.GetMeta(context.Background(), resumeMetaKey)
				return err == nil && string(data) == want
			})
			stop()

			_, before := cloud.asks(b)
			cloud.mu.Lock()
			cloud.waiting = map[string]chan struct{}{b: make(chan struct{})}
			cloud.mu.Unlock()
			_, asked := cloud.asks(a)
			stop = runHolderWith(t, l, cloud, linktest.NewRecClock())
			defer stop()
			waitFor(t, "a's resume", func() bool { _, rvs := cloud.asks(a); return len(rvs) == len(asked)+1 })
			cloud.watchOf(a).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
			waitFor(t, "a read again", func() bool { _, rvs := cloud.asks(a); return len(rvs) == len(asked)+2 })
			cloud.mu.Lock()
			close(cloud.waiting[b])
			cloud.mu.Unlock()
			waitFor(t, "b's first read", func() bool { _, rvs := cloud.asks(b); return len(rvs) > len(before) })
			if _, rvs := cloud.asks(b); rvs[len(before)] != tc.want {
				t.Errorf("b's first watch on the start: got %q, want %q", rvs[len(before)], tc.want)
			}
		})
	}
}
