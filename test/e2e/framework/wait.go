//go:build e2e

package framework

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// pollInterval is how often readiness checks are retried.
const pollInterval = 250 * time.Millisecond

// probeTimeout bounds one readiness HTTP request.
const probeTimeout = 2 * time.Second

// handedOut are the ports FreePort returned in this process: the kernel
// hands a just-closed port out again at once, so two calls in a row (an
// etcd's client and peer ports) could otherwise get the same one.
var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{} // guarded by handedOutMu
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that it never returned before in this process.
func FreePort() (int, error) {
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range freePortAttempts {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !handedOut[port] {
			handedOut[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("find free port: every one of %d tries was handed out before", freePortAttempts)
}

// loopback returns "127.0.0.1:port".
func loopback(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// waitFor calls check every pollInterval until it returns nil, the process
// exits, or timeout passes. The error names the last failed check.
func waitFor(ctx context.Context, p *Process, what string, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	exited := p.Exited()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("wait for %s: %s exited: %v (last check: %v)", what, p.Name, p.ExitErr(), err)
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w (last check: %v)", what, ctx.Err(), err)
		case <-ticker.C:
		}
	}
}

// httpOK returns a check that GETs url with client and wants 200 OK.
func httpOK(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}
