package operations

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestNotifierProtocol(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "10000000") // 10 s: pings every 5 s
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var alive atomic.Bool
	alive.Store(true)
	var status atomic.Value
	status.Store("cloud connected")
	n, err := NewNotifier(clk, func(context.Context) error {
		if alive.Load() {
			return nil
		}
		return errors.New("wedged")
	}, func() string { return status.Load().(string) })
	if err != nil {
		t.Fatalf("notifier: %v", err)
	}
	if got, want := n.watchdog, 5*time.Second; got != want {
		t.Fatalf("ping interval: got %v, want %v", got, want)
	}
	ch := make(chan string, 16)
	n.send = func(state string) error { ch <- state; return nil }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx, slog.New(slog.DiscardHandler)); close(done) }()
	if got := <-ch; !strings.HasPrefix(got, "READY=1\n") || !strings.Contains(got, "STATUS=cloud connected") {
		t.Errorf("first message: got %q, want READY=1 with the status", got)
	}
	for i := range 3 {
		waitForTicker(t, clk)
		clk.Step(5 * time.Second)
		if got := <-ch; got != "WATCHDOG=1" {
			t.Fatalf("tick %d: got %q, want WATCHDOG=1", i, got)
		}
	}
	alive.Store(false)
	status.Store("cloud unreachable")
	waitForTicker(t, clk)
	clk.Step(5 * time.Second)
	if got := <-ch; got != "STATUS=cloud unreachable" {
		t.Errorf("wedged tick: got %q, want only the new status and no WATCHDOG=1", got)
	}
	cancel()
	<-done
	if got := <-ch; !strings.HasPrefix(got, "STOPPING=1") {
		t.Errorf("at shutdown: got %q, want STOPPING=1", got)
	}
}

// waitForTicker waits until the notifier waits on its ticker.
func waitForTicker(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatalf("notifier never waited on its ticker")
		}
		time.Sleep(time.Millisecond)
	}
}
