package satoken

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// TestRunRetriesUntilFirstRead: while no key was ever read, Run tries
// every keyRetryInterval; once read, every keyRefreshInterval. A read's
// audiences (a minted token's) are learnt.
func TestRunRetriesUntilFirstRead(t *testing.T) {
	key := newRSAKey(t, "k")
	raw := jwks(t, key)
	clk := testingclock.NewFakeClock(testStart)
	var reads atomic.Int32
	v := New(Config{NodeName: testNode, Clock: clk, Fetch: func(context.Context) (Published, error) {
		if reads.Add(1) == 1 {
			return Published{}, errors.New("no pod yet")
		}
		return Published{Issuer: testIssuer, JWKS: raw, Audiences: []string{"minted-aud"}}, nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx, nil); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for (reads.Load() < n || !clk.HasWaiters()) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if got := reads.Load(); got != n {
			t.Fatalf("reads: got %d, want %d", got, n)
		}
	}
	waitFor(1)
	clk.Step(keyRetryInterval)
	waitFor(2)
	if !v.Ready() {
		t.Fatal("not ready after a successful read")
	}
	v.mu.Lock()
	learnt := slices.Clone(v.audiences)
	v.mu.Unlock()
	if !slices.Equal(learnt, []string{"minted-aud"}) {
		t.Fatalf("audiences: got %v, want [minted-aud]", learnt)
	}
	clk.Step(keyRetryInterval)
	time.Sleep(20 * time.Millisecond)
	if got := reads.Load(); got != 2 {
		t.Fatalf("reads a retry interval after success: got %d, want 2", got)
	}
	clk.Step(keyRefreshInterval)
	waitFor(3)
}

// The daemon runs no loop without a verifier; a verifier's loop reads the
// keys only while the cloud is up, and ends with its context.
func TestRunnerOf(t *testing.T) {
	if RunnerOf(nil, nil) != nil {
		t.Fatal("RunnerOf(nil): got a loop, want nil")
	}
	for _, tc := range []struct {
		name      string
		up        bool
		wantReads int32
	}{
		{"cloud down", false, 0},
		{"cloud up", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reads, asked atomic.Int32
			v := New(Config{NodeName: testNode, Clock: testingclock.NewFakeClock(testStart), Fetch: func(context.Context) (Published, error) {
				reads.Add(1)
				return Published{}, errors.New("no keys")
			}})
			run := RunnerOf(v, func() bool { asked.Add(1); return tc.up })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- run(ctx) }()
			for deadline := time.Now().Add(5 * time.Second); asked.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			cancel()
			if err := <-done; err != nil || reads.Load() != tc.wantReads {
				t.Errorf("got %v after %d reads, want nil after %d", err, reads.Load(), tc.wantReads)
			}
		})
	}
}
