package demand

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link/linktest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errRefused is a transport error: the cloud did not answer.
var errRefused = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")

// After every held object's watch lost the cloud, the Holder resumes the
// object with the newest resume point first, alone: when the cloud serves
// it (a blip) every other object resumes from its own point, and none is
// read again; when it answers 410 (a restarted cloud) every object is
// read again with one streaming watch, and none is resumed.
func TestDemandProbesOnceAfterLostCloud(t *testing.T) {
	names := []string{"a", "b", "c"}
	keys := []string{"secrets/ns/a", "secrets/ns/b", "secrets/ns/c"}
	const newest = "secrets/ns/b"
	rvs := map[string]uint64{"secrets/ns/a": 51, "secrets/ns/b": 53, "secrets/ns/c": 52}
	gone := apierrors.NewResourceExpired("too old resource version: 51 (60)")
	for _, tt := range []struct {
		name string
		// probeErr is the cloud's answer to the probe, nil to serve it.
		probeErr error
		// want are the watches after the lost one, by key: the newest
		// object's, then the others'.
		wantNewest, wantOther []string
	}{
		{"blip", nil, []string{"53"}, []string{"rv"}},
		{"restarted cloud", gone, []string{"53", "stream>=53"}, []string{"stream>=rv"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocal(t, secretVolume("a"), secretVolume("b"), secretVolume("c"))
			cloud := newResumeCloud()
			for _, n := range names {
				cloud.objs["secrets/ns/"+n] = namedObject("Secret", "ns", n, 10, n)
			}
			clk := linktest.NewRecClock()
			stop := runHolderWith(t, l, cloud, clk)
			defer stop()
			for _, k := range keys {
				waitFor(t, "the streaming watch of "+k, func() bool { return cloud.watchOf(k) != nil })
			}
			// Each object moves to its own resume point.
			for i, k := range keys {
				cloud.watchOf(k).Modify(namedObject("Secret", "ns", names[i], rvs[k], "new"))
				waitFor(t, "the change of "+k, func() bool {
					o, _, _ := l.secrets.Cache.Get("ns", names[i])
					return o != nil && o.RV == rvs[k]
				})
			}
			// The cloud goes away: every resume gets no answer.
			cloud.mu.Lock()
			cloud.failResumes, cloud.failResumeWith = len(keys), errRefused
			cloud.mu.Unlock()
			for _, k := range keys {
				cloud.watchOf(k).Stop()
			}
			for _, k := range keys {
				waitFor(t, "the failed resume of "+k, func() bool { _, w := cloud.asks(k); return len(w) == 2 })
			}
			cloud.mu.Lock()
			cloud.failResumes, cloud.failResumeWith = 1, tt.probeErr
			if tt.probeErr == nil {
				cloud.failResumes = 0
			}
			cloud.mu.Unlock()

			// The probe comes first and alone.
			waitFor(t, "the probe", func() bool {
				clk.Step(100 * time.Millisecond) // past the backoff, not the probe's settling
				_, w := cloud.asks(newest)
				return len(w) == 3
			})
			for _, k := range keys {
				if _, w := cloud.asks(k); k != newest && len(w) != 2 {
					t.Errorf("%s: got watches %v before the probe's answer, want none after the lost one", k, w[2:])
				}
			}
			waitFor(t, "every object's watch", func() bool {
				clk.Step(time.Second) // past the settling and the relist delay
				for _, k := range keys {
					if _, w := cloud.asks(k); len(w) < 2+len(tt.wantOther) || (k == newest && len(w) < 2+len(tt.wantNewest)) {
						return false
					}
				}
				return true
			})
			for _, k := range keys {
				want := tt.wantOther
				if k == newest {
					want = tt.wantNewest
				}
				want = slices.Clone(want)
				for i, w := range want {
					want[i] = strings.Replace(w, "rv", strconv.FormatUint(rvs[k], 10), 1)
				}
				if _, w := cloud.asks(k); !slices.Equal(w[2:], want) {
					t.Errorf("%s: got watches %v after the lost one, want %v", k, w[2:], want)
				}
			}
		})
	}
}

// With no other object lost, an object whose probe the cloud refused for
// itself (403, 429) probes again, with its own backoff, until answered.
func TestDemandProbeRetriesRefusal(t *testing.T) {
	l := newLocal(t, secretVolume("used"))
	const key = "secrets/ns/used"
	cloud := newResumeCloud()
	clk := linktest.NewRecClock()
	stop := runHolderWith(t, l, cloud, clk)
	defer stop()
	waitFor(t, "the streaming watch", func() bool { return cloud.watchOf(key) != nil })
	cloud.mu.Lock()
	cloud.failResumes, cloud.failResumeWith = 1, errRefused
	cloud.mu.Unlock()
	cloud.watchOf(key).Stop()
	waitFor(t, "the failed resume", func() bool { _, w := cloud.asks(key); return len(w) == 2 })
	cloud.mu.Lock()
	cloud.failResumes, cloud.failResumeWith = 1, apierrors.NewTooManyRequests("slow down", 0)
	cloud.mu.Unlock()
	waitFor(t, "the probes", func() bool {
		clk.Step(time.Second)
		_, w := cloud.asks(key)
		return len(w) == 4
	})
	if _, w := cloud.asks(key); !slices.Equal(w, []string{"stream", "40", "40", "40"}) {
		t.Errorf("watches: got %v, want [stream 40 40 40]", w)
	}
}

// The prober chooses the newest resume point to probe, hands the choice
// to the next newest when the chosen worker stops, wakes every waiting
// worker with the one answer, and starts a new outage for a loss after
// the answer.
func TestProberSharesOneAnswerPerOutage(t *testing.T) {
	ctx, stop := context.WithTimeout(context.Background(), waitTimeout)
	defer stop()
	var p prober
	o := p.join(1, 51)
	if p.join(2, 53) != o || p.join(3, 52) != o {
		t.Fatal("workers that lost the cloud together: got different outages, want one")
	}
	type answer struct{ probe, expired bool }
	waiting := make(chan answer, 1)
	go func() {
		probe, expired, _ := p.await(ctx, o, 1)
		waiting <- answer{probe, expired}
	}()
	// Worker 3 (52) is not chosen while worker 2 (53) is lost: it waits.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := p.await(short, o, 3); err == nil {
		t.Fatal("worker 3 awaited without a probe: got an answer, want it to wait")
	}
	p.leave(o, 2) // the chosen worker stops before probing
	if probe, _, err := p.await(ctx, o, 3); err != nil || !probe {
		t.Fatalf("after worker 2 left: got probe %v (err %v) for worker 3, want it chosen", probe, err)
	}
	p.decide(o, true)
	select {
	case a := <-waiting:
		if a.probe || !a.expired {
			t.Errorf("worker 1: got %+v, want the expired answer", a)
		}
	case <-time.After(waitTimeout):
		t.Fatal("worker 1 was not woken by the answer")
	}
	if next := p.join(1, 60); next == o {
		t.Error("a loss after the answer: got the decided outage, want a new one")
	} else if probe, _, _ := p.await(ctx, next, 1); !probe {
		t.Error("a loss after the answer: got no probe of its own, want one")
	}
}
