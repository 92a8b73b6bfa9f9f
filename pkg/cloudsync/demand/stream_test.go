package demand

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// An object never held is read with one streaming watch and no LIST: the
// initial events up to the bookmark that ends them are its state (none
// when it does not exist), the bookmark's resourceVersion its resume
// point, and the same stream then carries its changes.
func TestDemandStreamsObjectState(t *testing.T) {
	for _, tt := range []struct {
		name   string
		exists bool
	}{
		{"object exists", true},
		{"object does not exist yet", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocal(t, secretVolume("used"))
			const key = "secrets/ns/used"
			cloud := newResumeCloud()
			if !tt.exists {
				delete(cloud.objs, key)
			}
			stop := runHolder(t, l, cloud)
			defer stop()
			waitFor(t, "the streaming watch", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 1 })
			waitFor(t, "the resume point at the bookmark", func() bool { return l.storedPoint(t) == 40 })
			o, _, err := l.secrets.Cache.Get("ns", "used")
			if err != nil {
				t.Fatal(err)
			}
			if got := o != nil; got != tt.exists {
				t.Errorf("held after the stream: got %v, want %v", got, tt.exists)
			}
			cloud.watchOf(key).Add(namedObject("Secret", "ns", "used", 50, "created or changed"))
			waitFor(t, "the change on the same stream", func() bool {
				o, _, _ := l.secrets.Cache.Get("ns", "used")
				return o != nil && o.RV == 50
			})
			lists, rvs := cloud.asks(key)
			cloud.mu.Lock()
			plain, streams := cloud.plainLists, cloud.streams
			cloud.mu.Unlock()
			if lists != 1 || plain != 0 || streams != 1 || len(rvs) != 1 {
				t.Errorf("got %d reads (%d LISTs, %d streams) and watches %v, want 1 read: one streaming watch, no LIST, no other watch",
					lists, plain, streams, rvs)
			}
		})
	}
}

// A cloud that refuses streaming watches (422, no WatchList) is asked
// once; the object is then listed and watched from the list's
// resourceVersion, and so is every later read of that kind's objects.
func TestDemandListsWhenCloudRefusesStreams(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	cloud.noStreams = true
	stop := runHolder(t, l, cloud)
	defer stop()
	watches := func(n int) func() bool {
		return func() bool { _, rvs := cloud.asks(key); return len(rvs) == n }
	}
	waitFor(t, "the watch after the list", watches(1))
	counts := func() (int, int, []string) {
		_, rvs := cloud.asks(key)
		cloud.mu.Lock()
		defer cloud.mu.Unlock()
		return cloud.plainLists, cloud.streams, rvs
	}
	if lists, streams, rvs := counts(); lists != 1 || streams != 1 || rvs[0] != "40" {
		t.Errorf("got %d LISTs, %d streaming watches and watches from %v, want 1 LIST after 1 refused stream and a watch from 40", lists, streams, rvs)
	}
	cloud.watchOf(key).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	waitFor(t, "the watch after the relist", watches(2))
	if lists, streams, rvs := counts(); lists != 2 || streams != 1 || rvs[1] != "40" {
		t.Errorf("after 410: got %d LISTs, %d streaming watches and watches from %v, want 2 LISTs, still 1 stream, and a watch from 40", lists, streams, rvs)
	}
}

// storedPoint is the resume point of the secret ns/used in l's store (0:
// none yet), which the Holder writes soon after a read
// (resumeFlushListed).
func (l local) storedPoint(t *testing.T) uint64 {
	t.Helper()
	data, err := l.store.GetMeta(context.Background(), resumeMetaKey)
	if err != nil {
		return 0
	}
	points, err := decodeResume(data)
	if err != nil {
		t.Fatal(err)
	}
	return points[nodescope.Ref{Kind: nodescope.Secret, Namespace: "ns", Name: "used"}]
}

// initialState takes the events up to the bookmark that ends the initial
// events as the state, skips other bookmarks, and tells a refusal, an
// expiry and a stream ended too soon apart.
func TestInitialState(t *testing.T) {
	end := func(rv string) watch.Event {
		b := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
		b.SetResourceVersion(rv)
		b.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		return watch.Event{Type: watch.Bookmark, Object: b}
	}
	progress := watch.Event{Type: watch.Bookmark, Object: namedObject("Secret", "", "", 41, "")}
	added := watch.Event{Type: watch.Added, Object: namedObject("Secret", "ns", "used", 10, "v")}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ListOptions"}, "", field.ErrorList{field.Forbidden(field.NewPath("sendInitialEvents"), "no")})
	for _, tt := range []struct {
		name    string
		events  []watch.Event
		close   bool
		wantObj bool
		wantRV  uint64
		wantErr error
	}{
		{"object then end", []watch.Event{added, end("42")}, false, true, 42, nil},
		{"no object", []watch.Event{end("42")}, false, false, 42, nil},
		{"progress bookmark skipped", []watch.Event{added, progress, end("43")}, false, true, 43, nil},
		{"deleted before the end", []watch.Event{added, {Type: watch.Deleted, Object: added.Object}, end("44")}, false, false, 44, nil},
		{"closed before the end", []watch.Event{added}, true, true, 0, errNoInitialEventsEnd},
		{"expired", []watch.Event{{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}}}, false, false, 0, cloudsync.ErrExpired},
		{"refused", []watch.Event{{Type: watch.Error, Object: &invalid.ErrStatus}}, false, false, 0, errStreamRefused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan watch.Event, len(tt.events))
			for _, ev := range tt.events {
				ch <- ev
			}
			if tt.close {
				close(ch)
			}
			u, err := initialState(context.Background(), ch)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error: got %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := u.obj != nil; got != tt.wantObj || u.rv != tt.wantRV || !u.listed {
				t.Errorf("got object %v at %d (listed %v), want object %v at %d, listed", got, u.rv, u.listed, tt.wantObj, tt.wantRV)
			}
		})
	}
}

// A held object whose resumed watch got no answer from the cloud (it may
// have restarted, which expires every watch) is resumed once the link is
// up, as the probe of the outage: a cloud that serves it goes on with
// that watch; a 410 reads the object again with a streaming watch after
// a delay within the relist window. An answer of the running cloud (403)
// is retried as a resume, no probe.
func TestDemandRereadsAfterLostCloud(t *testing.T) {
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	for _, tt := range []struct {
		name string
		err  error
		// probeErr answers the resume after err, nil to serve it.
		probeErr   error
		want       []string
		wantDelays int
	}{
		{"no answer, cloud still serves", refused, nil, []string{"stream", "40", "40"}, 1},
		{"no answer, cloud restarted", refused, apierrors.NewResourceExpired("too old resource version: 40 (60)"),
			[]string{"stream", "40", "40", "stream>=40"}, 2},
		{"403 of the running cloud", apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "used", errors.New("no relationship found")),
			nil, []string{"stream", "40", "40"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocal(t, secretVolume("used"))
			const key = "secrets/ns/used"
			cloud := newResumeCloud()
			clk := linktest.NewRecClock()
			stop := runHolderWith(t, l, cloud, clk)
			defer stop()
			waitFor(t, "the streaming watch", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 1 })
			cloud.mu.Lock()
			cloud.failResumes, cloud.failResumeWith = 1, tt.err
			cloud.mu.Unlock()
			before := len(clk.Timers())
			cloud.watchOf(key).Stop() // the cloud goes away
			waitFor(t, "the failed resume", func() bool { _, rvs := cloud.asks(key); return len(rvs) == 2 })
			if tt.probeErr != nil {
				cloud.mu.Lock()
				cloud.failResumes, cloud.failResumeWith = 1, tt.probeErr
				cloud.mu.Unlock()
			}
			waitFor(t, "the next read or resume", func() bool {
				clk.Step(time.Second) // past the backoff and the relist delay
				_, rvs := cloud.asks(key)
				return len(rvs) == len(tt.want)
			})
			if _, rvs := cloud.asks(key); !slices.Equal(rvs, tt.want) {
				t.Errorf("watches: got %v, want %v", rvs, tt.want)
			}
			// The backoff's delay, and before a read the relist delay
			// (the resume points' flushes and the probe's settling aside).
			var delays []time.Duration
			for _, d := range clk.Timers()[before:] {
				if d != resumeFlush && d != resumeFlushListed && d != heardEvery && d != probeSettle {
					delays = append(delays, d)
				}
			}
			if len(delays) != tt.wantDelays {
				t.Errorf("delays: got %v, want %d (the backoff's, and a relist delay before a read)", delays, tt.wantDelays)
			}
			for _, d := range delays {
				if d >= link.DefaultRelistSpread {
					t.Errorf("delay %v: want under the relist window %v", d, link.DefaultRelistSpread)
				}
			}
		})
	}
}
