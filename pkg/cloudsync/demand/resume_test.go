package demand

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// newResumeCloud is a cloud holding the secret ns/used at 10, listed at 40,
// that records LISTs and watches.
func newResumeCloud() *demandCloud {
	return &demandCloud{listRV: 40, asked: map[string]bool{}, watches: map[string]*watch.FakeWatcher{},
		lists: map[string]int{}, watchRVs: map[string][]string{},
		objs: map[string]*unstructured.Unstructured{"secrets/ns/used": namedObject("Secret", "ns", "used", 10, "in-use")}}
}

// runHolder runs a Holder of l from cloud until the returned stop is
// called; stop waits for Run to return.
func runHolder(t *testing.T, l local, cloud *demandCloud) (stop func()) {
	t.Helper()
	return runHolderWith(t, l, cloud, clock.RealClock{})
}

// runHolderWith is runHolder timed on clk.
func runHolderWith(t *testing.T, l local, cloud *demandCloud, clk clock.Clock) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := l.holder(t, cloud)
	d.cfg.Clock = clk
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: got %v, want nil", err)
		}
	}
}

// A restarted Holder resumes each held object's watch from the last
// resourceVersion the previous run delivered (here a bookmark's), without
// listing it; only a 410 lists that object again.
func TestDemandRestartResumesFromStoredPoint(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	watches := func(n int) func() bool {
		return func() bool { _, rvs := cloud.asks(key); return len(rvs) == n }
	}
	clk := clocktesting.NewFakeClock(time.Now())
	stop := runHolderWith(t, l, cloud, clk)
	waitFor(t, "the first watch", watches(1))
	cloud.watchOf(key).Action(watch.Bookmark, namedObject("Secret", "ns", "used", 45, ""))
	want := `{"secret/ns/used":45}`
	waitFor(t, "the bookmark's resume point written", func() bool {
		clk.Step(resumeFlush)
		data, err := l.store.GetMeta(context.Background(), resumeMetaKey)
		return err == nil && string(data) == want
	})
	stop()

	for _, tt := range []struct {
		name      string
		wantLists int
		wantFrom  string
	}{
		{"restart", 1, "45"},
		{"second restart", 1, "45"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, rvs := cloud.asks(key)
			n := len(rvs)
			stop := runHolder(t, l, cloud)
			defer stop()
			waitFor(t, "the resumed watch", watches(n+1))
			lists, rvs := cloud.asks(key)
			if lists-before != 0 || rvs[n] != tt.wantFrom {
				t.Errorf("got %d new LISTs and a watch from %s, want none and a watch from %s", lists-before, rvs[n], tt.wantFrom)
			}
		})
	}

	_, rvs := cloud.asks(key)
	stop = runHolder(t, l, cloud)
	defer stop()
	waitFor(t, "the resumed watch", watches(len(rvs)+1))
	cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	waitFor(t, "the watch after a relist", watches(len(rvs)+2))
	if lists, rvs := cloud.asks(key); lists != 2 || rvs[len(rvs)-1] != "stream>="+rvs[len(rvs)-2] {
		t.Errorf("after 410: got %d reads and watches from %v, want 2 reads, the second a streaming watch not older than the expired point", lists, rvs)
	}
	// Only the new reference's first read is not Background: every later
	// one reads an object the node holds and serves.
	bg := cloud.backgrounds(key)
	wantBG := make([]bool, len(bg))
	for i := 1; i < len(wantBG); i++ {
		wantBG[i] = true
	}
	if !slices.Equal(bg, wantBG) {
		t.Errorf("got reads Background %v, want %v", bg, wantBG)
	}
}

// Resume points are used only with the stored state they were taken
// with: a Holder whose kinds were not loaded from the store lists.
func TestDemandIgnoresResumePointsWithoutStoredState(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	data, err := encodeResume(map[nodescope.Ref]uint64{{Kind: nodescope.Secret, Namespace: "ns", Name: "used"}: 45})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.store.PutMeta(context.Background(), resumeMetaKey, data); err != nil {
		t.Fatal(err)
	}
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	stop := runHolder(t, l, cloud)
	defer stop()
	waitFor(t, "the first watch", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 1 })
	if lists, rvs := cloud.asks(key); lists != 1 || rvs[0] != "stream" {
		t.Errorf("got %d reads and watches from %v, want 1 read, a streaming watch", lists, rvs)
	}
}

// Points found without the stored state they were taken with are deleted
// at once, so a later start, with the kinds stored by then, does not take
// them for its own.
func TestDemandDeletesResumePointsWithoutStoredState(t *testing.T) {
	l := newLocal(t) // a pod referencing nothing: no point is set anew
	data, err := encodeResume(map[nodescope.Ref]uint64{{Kind: nodescope.Secret, Namespace: "ns", Name: "used"}: 45})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.store.PutMeta(context.Background(), resumeMetaKey, data); err != nil {
		t.Fatal(err)
	}
	stop := runHolder(t, l, newResumeCloud())
	defer stop()
	waitFor(t, "the points deleted", func() bool {
		data, err := l.store.GetMeta(context.Background(), resumeMetaKey)
		return err == nil && string(data) == "{}"
	})
}

// When a syncer reports the cloud's history behind the stored one, every
// held object is read again and its resume point dropped.
func TestDemandRelistsOnRegression(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	d := l.holder(t, cloud)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first watch", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 1 })

	// The rebuilt cloud holds the secret anew at a lower resourceVersion.
	cloud.mu.Lock()
	cloud.listRV = 8
	cloud.objs[key] = namedObject("Secret", "ns", "used", 7, "rebuilt")
	cloud.mu.Unlock()
	d.cfg.Link.ReportRegressed("pods")
	waitFor(t, "the watch after the relist", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 2 })
	if lists, rvs := cloud.asks(key); lists != 2 || rvs[1] != "stream" {
		t.Errorf("got %d reads and watches from %v, want 2 reads, the second a streaming watch", lists, rvs)
	}
	waitFor(t, "the rebuilt secret", func() bool {
		o, _, _ := l.secrets.Cache.Get("ns", "used")
		return o != nil && o.RV == 7
	})
}

func TestDecodeResume(t *testing.T) {
	used := nodescope.Ref{Kind: nodescope.Secret, Namespace: "ns", Name: "used"}
	cm := nodescope.Ref{Kind: nodescope.ConfigMap, Namespace: "ns", Name: "kube-root-ca.crt"}
	for _, tt := range []struct {
		name    string
		data    string
		want    map[nodescope.Ref]uint64
		wantErr bool
	}{
		{"both kinds", `{"secret/ns/used":45,"configmap/ns/kube-root-ca.crt":46}`, map[nodescope.Ref]uint64{used: 45, cm: 46}, false},
		{"empty", `{}`, map[nodescope.Ref]uint64{}, false},
		{"unknown kind", `{"pod/ns/p":1}`, nil, true},
		{"no name", `{"secret/ns/":1}`, nil, true},
		{"slash in name", `{"secret/ns/a/b":1}`, nil, true},
		{"zero", `{"secret/ns/used":0}`, nil, true},
		{"negative", `{"secret/ns/used":-1}`, nil, true},
		{"not json", `secret`, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeResume([]byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error: got %v, want error %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for r, rv := range tt.want {
				if got[r] != rv {
					t.Errorf("%v: got %d, want %d", r, got[r], rv)
				}
			}
		})
	}
}

// FuzzDecodeResume: stored resume points are disk input; whatever they
// hold, decoding never panics and what it accepts encodes back the same.
func FuzzDecodeResume(f *testing.F) {
	f.Add([]byte(`{"secret/ns/used":45,"configmap/ns/kube-root-ca.crt":46}`))
	f.Add([]byte(`{"secret/ns/":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeResume(data)
		if err != nil {
			return
		}
		enc, err := encodeResume(got)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeResume(enc)
		if err != nil || len(again) != len(got) {
			t.Fatalf("re-decoding %s: got %v (err %v), want %v", enc, again, err, got)
		}
	})
}

// A point a list set is written within resumeFlushListed, not the longer
// resumeFlush of bookmarks: after a cloud restart every object is listed
// again, and a restart soon after must not list them once more.
func TestDemandWritesListedPointSoon(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	cloud := newResumeCloud()
	clk := clocktesting.NewFakeClock(time.Now())
	t0 := clk.Now()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()
	waitFor(t, "the first watch", func() bool { _, rvs := cloud.asks("secrets/ns/used"); return len(rvs) == 1 })
	waitFor(t, "the listed point written", func() bool {
		if clk.HasWaiters() {
			clk.Step(resumeFlushListed)
		}
		data, err := l.store.GetMeta(context.Background(), resumeMetaKey)
		return err == nil && string(data) == `{"secret/ns/used":40}`
	})
	if since := clk.Since(t0); since >= resumeFlush {
		t.Errorf("listed point written after %v of fake time, want under %v", since, resumeFlush)
	}
}
