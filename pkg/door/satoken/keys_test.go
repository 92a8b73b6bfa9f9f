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
