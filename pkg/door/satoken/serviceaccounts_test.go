package satoken

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestVerifyServiceAccount(t *testing.T) {
	key := newRSAKey(t, "k")
	deleted := testStart.Add(-2 * time.Minute)
	for _, tc := range []struct {
		name    string
		learnt  string // UID learnt from a review; empty learns none
		cloud   *ServiceAccount
		online  bool
		want    string
		wantGet int
	}{
		{"learnt, offline", testSAUID, nil, false, "ok", 0},
		{"unknown, offline", "", nil, false, "not-local", 0},
		{"unknown, read from the cloud", "", &ServiceAccount{UID: testSAUID}, true, "ok", 1},
		{"learnt UID differs, offline", "old-uid", nil, false, "invalid", 0},
		{"learnt UID differs, online, cloud agrees with the token", "old-uid", &ServiceAccount{UID: testSAUID}, true, "ok", 1},
		{"cloud's UID differs, online", "", &ServiceAccount{UID: "new-uid"}, true, "not-local", 1},
		{"deleted in the cloud", "", &ServiceAccount{UID: testSAUID, DeletionTimestamp: &deleted}, true, "invalid", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, key)
			f.v.sas, f.store.m = map[string]saEntry{}, nil
			gets := 0
			if tc.cloud != nil {
				f.v.cfg.ServiceAccounts = func(context.Context, string, string) (ServiceAccount, error) {
					gets++
					return *tc.cloud, nil
				}
			}
			if tc.learnt != "" {
				f.v.Learn(context.Background(), "system:serviceaccount:kube-system:kube-proxy", tc.learnt, nil)
				f.clock.Step(serviceAccountRecheck)
			}
			if err := f.v.refresh(context.Background(), 0); err != nil {
				t.Fatal(err)
			}
			_, err := f.v.Verify(context.Background(), sign(t, key, podToken()), tc.online)
			if got := outcome(err); got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
			if gets != tc.wantGet {
				t.Errorf("reads of the ServiceAccount: got %d, want %d", gets, tc.wantGet)
			}
		})
	}
}

func TestServiceAccountReadOncePerRecheck(t *testing.T) {
	key := newRSAKey(t, "k")
	f := newFixture(t, key)
	f.v.sas, f.store.m = map[string]saEntry{}, nil
	gets := 0
	f.v.cfg.ServiceAccounts = func(context.Context, string, string) (ServiceAccount, error) {
		gets++
		if gets > 1 {
			return ServiceAccount{}, errors.New("forbidden")
		}
		return ServiceAccount{UID: testSAUID}, nil
	}
	tok := sign(t, key, podToken())
	for range 3 {
		if _, err := f.v.Verify(context.Background(), tok, true); err != nil {
			t.Fatal(err)
		}
	}
	if gets != 1 {
		t.Fatalf("reads within the recheck: got %d, want 1", gets)
	}
	f.clock.Step(serviceAccountRecheck)
	if _, err := f.v.Verify(context.Background(), tok, true); err != nil {
		t.Fatalf("a failed recheck keeps the copy: %v", err)
	}
	if gets != 2 {
		t.Fatalf("reads after the recheck: got %d, want 2", gets)
	}
	for range 3 {
		if _, err := f.v.Verify(context.Background(), tok, true); err != nil {
			t.Fatal(err)
		}
	}
	if gets != 2 {
		t.Fatalf("reads after a refused read, within the recheck: got %d, want 2", gets)
	}
}

func TestStoredForOffline(t *testing.T) {
	key := newRSAKey(t, "k")
	f := newFixture(t, key)
	f.v.Learn(context.Background(), "system:serviceaccount:kube-system:kube-proxy", testSAUID, []string{"learnt-aud"})
	if err := f.v.refresh(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	// A restarted daemon with no cloud and no configured audience.
	v := New(Config{NodeName: testNode, Store: f.store, Clock: f.clock,
		Pods: pods(map[string]Pod{"kube-system/kube-proxy-x": {UID: testPodUID}})})
	v.Load(context.Background())
	spec := podToken()
	spec.audience = []string{"learnt-aud"}
	if _, err := v.Verify(context.Background(), sign(t, key, spec), false); err != nil {
		t.Fatalf("offline with stored keys, audiences and service account: %v", err)
	}
	spec.audience = []string{testAudience}
	if _, err := v.Verify(context.Background(), sign(t, key, spec), false); outcome(err) != "not-local" {
		t.Fatalf("an audience never learnt: got %s, want not-local", outcome(err))
	}
}

// TestServiceAccountConcurrentFirstRequests: a component's first requests
// arrive together; they share one read of its ServiceAccount and are all
// verified, none sent to the cloud for review.
func TestServiceAccountConcurrentFirstRequests(t *testing.T) {
	key := newRSAKey(t, "k")
	f := newFixture(t, key)
	f.v.sas, f.store.m = map[string]saEntry{}, nil
	var gets atomic.Int32
	release := make(chan struct{})
	f.v.cfg.ServiceAccounts = func(context.Context, string, string) (ServiceAccount, error) {
		gets.Add(1)
		<-release
		return ServiceAccount{UID: testSAUID}, nil
	}
	tok := sign(t, key, podToken())
	const callers = 5
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := f.v.Verify(context.Background(), tok, true)
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // let every caller reach the read
	close(release)
	for range callers {
		if err := <-errs; err != nil {
			t.Errorf("concurrent first request: got %s (%v), want ok", outcome(err), err)
		}
	}
	if got := gets.Load(); got != 1 {
		t.Errorf("reads: got %d, want 1", got)
	}
}

func TestLearnOnlyFromServiceAccounts(t *testing.T) {
	for _, tc := range []struct {
		user string
		want bool
	}{{"system:serviceaccount:kube-system:kube-proxy", true}, {"oidc:alice", false}} {
		v := New(Config{})
		v.Learn(context.Background(), tc.user, "uid", []string{"aud"})
		v.mu.Lock()
		got := slices.Contains(v.audiences, "aud")
		v.mu.Unlock()
		if got != tc.want {
			t.Errorf("%s: audience learnt %v, want %v", tc.user, got, tc.want)
		}
	}
}
