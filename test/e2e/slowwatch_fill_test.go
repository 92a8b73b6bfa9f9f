//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// fillStep is how long the warm-up writes between two looks at the
	// edge's send queues: about 20 updates.
	fillStep = time.Second
	// fillLimit bounds the warm-up. Loopback socket buffers of a few MiB
	// take about 85 updates of slowPadding bytes (4 to 5 s of writes).
	fillLimit = 30 * time.Second
	// freedQueueBound is the most the edge's send queues may hold once the
	// stalled connections are closed: a few events of the healthy watch.
	freedQueueBound = 1 << 20
	// freedWithin bounds the wait for the stalled connections to close:
	// the edge's grace for an evicted watch's writes (10 s), with margin.
	freedWithin = 30 * time.Second
	// tcpEstablished is the state column of an established socket in
	// /proc/net/tcp.
	tcpEstablished = "01"
)

// fillStalledWatchers writes updates until the kernel's send queues of the
// edge's connections on port stop growing: every stalled watcher's window
// and socket buffers are then full, as the contract's stalled watcher is.
// It then waits until the healthy watcher has every update written so far,
// so the measurement starts with no backlog from the phase in which each
// write went to every connection. It returns the updates written.
func fillStalledWatchers(t *testing.T, cms patcher, port int, healthy *healthyWatcher) map[string]time.Time {
	t.Helper()
	written := map[string]time.Time{}
	prev, err := edgeSendQueue(port)
	if err != nil {
		t.Fatalf("edge send queues: %v", err)
	}
	start := time.Now()
	for {
		maps.Copy(written, driveUpdates(t, cms, fillStep, len(written)))
		queued, err := edgeSendQueue(port)
		if err != nil {
			t.Fatalf("edge send queues: %v", err)
		}
		// A full queue takes nothing more; one update more would add
		// slowPadding bytes to every stalled connection's.
		if queued-prev < slowPadding {
			t.Logf("stalled watchers full after %d updates in %s: %d MiB queued in the kernel",
				len(written), time.Since(start).Round(time.Millisecond), queued>>20)
			break
		}
		if time.Since(start) > fillLimit {
			t.Fatalf("edge send queues still growing after %s: %d MiB", fillLimit, queued>>20)
		}
		prev = queued
	}
	healthy.waitFor(t, written)
	return written
}

// waitSendQueuesFreed waits until the edge has closed the evicted stalled
// watchers' connections, which frees their send queues in the kernel.
func waitSendQueuesFreed(t *testing.T, port int) {
	t.Helper()
	start := time.Now()
	for {
		queued, err := edgeSendQueue(port)
		if err != nil {
			t.Fatalf("edge send queues: %v", err)
		}
		if queued <= freedQueueBound {
			t.Logf("edge send queues freed %s after the drive: %d KiB", time.Since(start).Round(time.Millisecond), queued>>10)
			return
		}
		if time.Since(start) > freedWithin {
			t.Fatalf("edge send queues: got %d MiB %s after the drive, want under %d MiB: evicted watches still open",
				queued>>20, freedWithin, freedQueueBound>>20)
		}
		time.Sleep(rssSample)
	}
}

// edgeSendQueue returns the bytes queued in the kernel on the server side
// of the established TCP connections whose local port is port (IPv4, as the
// watchers dial 127.0.0.1), from /proc/net/tcp.
func edgeSendQueue(port int) (int64, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	suffix := fmt.Sprintf(":%04X", port)
	var sum int64
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || !strings.HasSuffix(fields[1], suffix) || fields[3] != tcpEstablished {
			continue
		}
		tx, _, _ := strings.Cut(fields[4], ":")
		n, err := strconv.ParseInt(tx, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("tx_queue %q: %w", fields[4], err)
		}
		sum += n
	}
	return sum, sc.Err()
}
