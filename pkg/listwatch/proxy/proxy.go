package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// Bounds on cloud requests, so an unreachable cloud answers fast.
const (
	// cloudResponseHeaderTimeout bounds the wait for the cloud's response
	// headers, covering a connection that stalls after it was made. It is
	// the longest an admission webhook may take (30 s), so slow but healthy
	// writes still pass; long-running requests (watch, logs, exec) send
	// their headers at once.
	cloudResponseHeaderTimeout = 30 * time.Second
)

// impersonateHeaderPrefix starts the headers that ask the cloud to act as
// another user. They are dropped so a local client cannot borrow the
// daemon's credentials as someone else.
const impersonateHeaderPrefix = "Impersonate-"

// Options are the proxy's seams.
type Options struct {
	Log *slog.Logger // never nil
	// Clock bounds the wait for response headers; never nil.
	Clock clock.WithDelayedExecution
	// ModifyResponse, when set, sees every cloud response before it is
	// passed on (httputil.ReverseProxy.ModifyResponse).
	ModifyResponse func(*http.Response) error
}

// New returns a reverse proxy to the cloud that authenticates as the
// caller the TLS door authenticated (caller.Transport), else with
// cfg's credentials, streams responses as they arrive (watches) and passes
// protocol upgrades through. It answers 503 when the cloud cannot be
// reached. Its requests share the connections of every other client of
// cfg (client-go's transport cache), as a kubelet's do: one TLS connection
// to the cloud per node, whose dials cfg's transport bounds (see
// link.ConfigureTransport).
func New(cfg *rest.Config, opts Options) (*httputil.ReverseProxy, error) {
	target, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	return &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { rewriteToCloud(pr, target) },
		Transport:      &headerTimeoutTransport{next: caller.Transport(rt), timeout: cloudResponseHeaderTimeout, clock: opts.Clock},
		FlushInterval:  -1,
		ErrorLog:       slog.NewLogLogger(opts.Log.Handler(), slog.LevelDebug),
		ErrorHandler:   Unavailable(opts.Log),
		ModifyResponse: opts.ModifyResponse,
	}, nil
}

// rewriteToCloud points the outgoing request at the cloud and drops the
// client's own credentials; the transport adds the daemon's.
func rewriteToCloud(pr *httputil.ProxyRequest, target *url.URL) {
	pr.SetURL(target)
	pr.Out.Header.Del("Authorization")
	for name := range pr.Out.Header {
		if strings.HasPrefix(name, impersonateHeaderPrefix) {
			pr.Out.Header.Del(name)
		}
	}
}

// Unavailable answers a request the cloud could not take with 503 and a
// retry hint.
func Unavailable(log *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil {
			return // the client went away; nobody reads an answer
		}
		log.Debug("cloud request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		response.WriteError(w, response.CloudUnavailable())
	}
}

// headerTimeoutTransport fails a round trip whose response headers do not
// arrive within timeout. The body, once headers arrived, is not limited: it
// lives as long as the incoming request.
type headerTimeoutTransport struct {
	next    http.RoundTripper
	timeout time.Duration
	clock   clock.WithDelayedExecution
}

func (t *headerTimeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	timer := t.clock.AfterFunc(t.timeout, cancel)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if !timer.Stop() {
		if err == nil {
			_ = resp.Body.Close()
		}
		return nil, fmt.Errorf("no response headers from the cloud within %s", t.timeout)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	// ctx is released when the incoming request ends.
	return resp, nil
}
