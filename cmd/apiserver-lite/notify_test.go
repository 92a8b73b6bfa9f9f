package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
