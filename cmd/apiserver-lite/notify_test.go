package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// fakeNotifySocket listens where systemd would (NOTIFY_SOCKET) and returns
// the datagrams it receives.
func fakeNotifySocket(t *testing.T) <-chan string {
	t.Helper()
	dir, err := os.MkdirTemp("", "notify") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	out := make(chan string, 1024)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(out)
				return
			}
			out <- string(buf[:n])
		}
	}()
	return out
}

// mustReceive waits for a datagram containing want, skipping others.
func mustReceive(t *testing.T, ch <-chan string, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case msg := <-ch:
			if strings.Contains(msg, want) {
				return msg
			}
		case <-timeout:
			t.Fatalf("no %q from the daemon", want)
			return ""
		}
	}
}

func TestNotifierProtocol(t *testing.T) {
	ch := fakeNotifySocket(t)
	t.Setenv("WATCHDOG_USEC", "10000000") // 10 s: pings every 5 s
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	var alive atomic.Bool
	alive.Store(true)
	var status atomic.Value
	status.Store("cloud connected")
	n, err := newNotifier(clk, func(context.Context) error {
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.run(ctx, slog.New(slog.DiscardHandler)); close(done) }()
	if got := mustReceive(t, ch, "READY=1"); !strings.Contains(got, "STATUS=cloud connected") {
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
