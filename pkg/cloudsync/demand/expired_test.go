package demand

import (
	"context"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
