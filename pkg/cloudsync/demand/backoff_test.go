package demand

import (
	"fmt"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// Objects the cloud refuses together (403 while the Node authorizer's
// graph fills) are each retried on their own jittered schedule: nothing
// is asked again before its delay; new references' first refusal is
// retried after [newRefRetry, 2 newRefRetry) (the graph lags a new pod
// by milliseconds), the next after [1 s, 2 s), then [2 s, 4 s); and the
// objects' delays differ, so they do not come back together. Each object
// is read (a streaming watch) once per refusal and once more, and no more.
func TestDemandRetriesEachObjectWithJitter(t *testing.T) {
	const objects, refusals = 6, 3
	var vols []corev1.Volume
	cloud := &demandCloud{listRV: 40, asked: map[string]bool{}, watches: map[string]*watch.FakeWatcher{},
		lists: map[string]int{}, watchRVs: map[string][]string{}, refuse: map[string]int{},
		objs: map[string]*unstructured.Unstructured{}}
	for i := range objects {
		name := fmt.Sprintf("s%d", i)
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}})
		key := "secrets/ns/" + name
		cloud.objs[key] = namedObject("Secret", "ns", name, 10, "v")
		cloud.refuse[key] = refusals
	}
	l := newLocal(t, vols...)
	clk := linktest.NewRecClock()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()

	totalLists := func() int {
		cloud.mu.Lock()
		defer cloud.mu.Unlock()
		n := 0
		for _, v := range cloud.lists {
			n += v
		}
		return n
	}
	retryTimers := func() []time.Duration {
		var out []time.Duration
		for _, d := range clk.Timers() {
			if d != resumeFlush && d != resumeFlushListed && d != heardEvery {
				out = append(out, d)
			}
		}
		return out
	}
	for round := 1; round <= refusals; round++ {
		waitFor(t, fmt.Sprintf("round %d's refusals", round), func() bool {
			return totalLists() == round*objects && len(retryTimers()) == round*objects
		})
		delays := retryTimers()[(round-1)*objects:]
		lo := newRefRetry
		if round > 1 {
			lo = objectRetryInitial << (round - 2)
		}
		seen := map[time.Duration]bool{}
		for _, d := range delays {
			if d < lo || d >= 2*lo {
				t.Errorf("round %d: retry delay %v, want in [%v, %v)", round, d, lo, 2*lo)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("round %d: every object retries after %v, want jittered delays", round, delays)
		}
		clk.Step(lo - time.Millisecond)
		time.Sleep(50 * time.Millisecond) // a retry made too early would show
		if got := totalLists(); got != round*objects {
			t.Fatalf("round %d: %d LISTs before any delay ended, want %d", round, got, round*objects)
		}
		clk.Step(lo + time.Millisecond) // past every delay of the round
	}
	waitFor(t, "every object held", func() bool {
		objs, _, err := l.secrets.Cache.List(versioncache.Predicate{})
		return err == nil && len(objs) == objects
	})
	if got, want := totalLists(), (refusals+1)*objects; got != want {
		t.Errorf("LISTs: got %d, want %d (each object once per refusal and once more)", got, want)
	}
}

// An object whose watch the cloud expired (410, as a restarted cloud
// answers every resumed watch) is read again only after a random delay
// within the link's relist window, on the injected clock, so a fleet's
// lists after a cloud restart do not arrive at once.
func TestDemandSpreadsRelistAfterExpiry(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	clk := linktest.NewRecClock()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()
	waitFor(t, "the first watch", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 1 })
	before := len(clk.Timers())
	cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	clk.MustReadAfterRelistDelay(t, before, func() int { lists, _ := cloud.asks(key); return lists }, 1,
		resumeFlush, resumeFlushListed, heardEvery)
}

// Objects the cloud refused together with one Retry-After (429 from its
// priority and fairness) wait at least that long, each with its own
// jitter on top, so they do not all come back at the second it names.
func TestDemandSpreadsRetryAfter(t *testing.T) {
	const objects, retryAfter = 6, 5 * time.Second
	var vols []corev1.Volume
	cloud := &demandCloud{listRV: 40, asked: map[string]bool{}, watches: map[string]*watch.FakeWatcher{},
		lists: map[string]int{}, watchRVs: map[string][]string{}, refuse: map[string]int{},
		objs:       map[string]*unstructured.Unstructured{},
		refuseWith: apierrors.NewTooManyRequests("too many requests, please try again later", int(retryAfter/time.Second))}
	for i := range objects {
		name := fmt.Sprintf("s%d", i)
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}})
		cloud.objs["secrets/ns/"+name] = namedObject("Secret", "ns", name, 10, "v")
		cloud.refuse["secrets/ns/"+name] = 1
	}
	l := newLocal(t, vols...)
	clk := linktest.NewRecClock()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()
	var delays []time.Duration
	waitFor(t, "every object's retry delay", func() bool {
		delays = nil
		for _, d := range clk.Timers() {
			if d != resumeFlush && d != resumeFlushListed && d != heardEvery {
				delays = append(delays, d)
			}
		}
		return len(delays) == objects
	})
	seen := map[time.Duration]bool{}
	for _, d := range delays {
		if d < retryAfter || d >= 2*retryAfter {
			t.Errorf("retry delay %v, want in [%v, %v)", d, retryAfter, 2*retryAfter)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("every object retries after %v, want jittered delays", delays)
	}
}

// Only a new reference's first read takes the short retry: an object
// already held whose relist (after a 410, as a restarted cloud answers)
// is refused 403 waits objectBackoff's first delay, [1 s, 2 s), so a
// cloud restart's refusals stay spread.
func TestDemandRetriesHeldObjectsRefusalOnTheBackoff(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	cloud.refuse = map[string]int{}
	clk := linktest.NewRecClock()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()
	waitFor(t, "the first watch", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 1 })
	cloud.mu.Lock()
	cloud.refuse[key] = 1
	cloud.mu.Unlock()
	before := len(clk.Timers())
	cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	var delays []time.Duration
	waitFor(t, "the relist's delay", func() bool {
		delays = nil
		for _, d := range clk.Timers()[before:] {
			if d != resumeFlush && d != resumeFlushListed && d != heardEvery {
				delays = append(delays, d)
			}
		}
		return len(delays) == 1
	})
	clk.Step(delays[0])
	waitFor(t, "the refused relist's retry delay", func() bool {
		delays = nil
		for _, d := range clk.Timers()[before:] {
			if d != resumeFlush && d != resumeFlushListed && d != heardEvery {
				delays = append(delays, d)
			}
		}
		return len(delays) == 2
	})
	if lists, _ := cloud.asks(key); lists != 2 {
		t.Fatalf("LISTs: got %d, want 2 (the first, the refused relist)", lists)
	}
	if d := delays[1]; d < objectRetryInitial || d >= 2*objectRetryInitial {
		t.Errorf("retry of a held object's refused relist after %v, want in [%v, %v)", d, objectRetryInitial, 2*objectRetryInitial)
	}
}
