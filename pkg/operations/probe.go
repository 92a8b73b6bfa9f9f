package operations

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// watchdogProbeTimeout bounds the self-probe behind each watchdog ping.
const watchdogProbeTimeout = 5 * time.Second

// WatchdogProbe is the watchdog's liveness probe: a GET of /livez
// through the door at addr the daemon can reach itself (SelfProbe, over
// TLS when isTLS), or the liveness checks in process (Alive) when no door
// listens (ok false), as door.Set.Probe reports them.
func (o *View) WatchdogProbe(addr net.Addr, isTLS, ok bool) func(context.Context) error {
	if !ok {
		return o.Alive
	}
	return SelfProbe(addr, isTLS)
}

// Alive runs the liveness checks in process: the watchdog's probe when no
// door the daemon can reach itself is open.
func (o *View) Alive(ctx context.Context) error {
	for _, c := range o.livenessChecks(ctx) {
		if c.err != nil {
			return fmt.Errorf("%s: %w", c.name, c.err)
		}
	}
	return nil
}

// SelfProbe returns a check that GETs /livez through the listener at addr
// (over TLS when useTLS), so a watchdog ping proves the serving loop
// answers and the sync loops are not wedged. Over TLS it does not verify
// the serving certificate: it sends no credential and trusts nothing in
// the answer but its status, from a listener the daemon opened itself.
func SelfProbe(addr net.Addr, useTLS bool) func(context.Context) error {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme, tr := "http", &http.Transport{DisableKeepAlives: true, Proxy: nil}
	if useTLS {
		scheme, tr.TLSClientConfig = "https", &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	}
	url := scheme + "://" + net.JoinHostPort(host, port) + PathLivez
	client := &http.Client{Timeout: watchdogProbeTimeout, Transport: tr}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("probe %s: %w", PathLivez, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("probe %s: status %d", PathLivez, resp.StatusCode)
		}
		return nil
	}
}
