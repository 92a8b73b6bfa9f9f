//go:build e2e

package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// OverloadedRequest is one request the overload gate answered with 429.
type OverloadedRequest struct {
	At     time.Time
	Method string
	// Path is the URL path; Watch is set for ?watch=true requests.
	Path  string
	Watch bool
}

// overloadGate is a TLS reverse proxy between apiserver-lite and
// kube-apiserver, presenting kube-apiserver's own serving certificate and
// forwarding with apiserver-lite's client certificate, so the cloud sees
// the same identity. While overloaded it answers every request with 429
// Too Many Requests and a Retry-After, as kube-apiserver's max-in-flight
// and priority-and-fairness filters do, and ends the requests in flight.
type overloadGate struct {
	srv   *http.Server // immutable
	proxy *httputil.ReverseProxy

	mu sync.Mutex
	// retryAfter is non-zero while overloaded. Guarded by mu.
	retryAfter time.Duration
	// inFlight ends the proxied requests of the current period. Guarded by
	// mu.
	inFlight context.Context
	cancel   context.CancelFunc
	// answered lists the requests answered 429. Guarded by mu.
	answered []OverloadedRequest
	// seen counts the requests that reached the gate by URL path, and
	// failPaths answers paths with the given status. Guarded by mu.
	seen      map[string]int
	failPaths map[string]int
}

// startOverloadGate starts the gate and points apiserver-lite's cloud
// kubeconfig at it. It is closed when the test ends.
func (c *Cluster) startOverloadGate() {
	c.t.Helper()
	serving, err := tls.LoadX509KeyPair(c.pki.ServingCert, c.pki.ServingKey)
	if err != nil {
		c.t.Fatalf("overload gate serving cert: %v", err)
	}
	client, err := tls.X509KeyPair(c.pki.edge.CertPEM, c.pki.edge.KeyPEM)
	if err != nil {
		c.t.Fatalf("overload gate client cert: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.pki.CAPEM)
	target := &url.URL{Scheme: "https", Host: loopback(c.cloudPort)}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // watches stream
	proxy.Transport = callerOrEdge{
		edge: &http.Transport{ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{client}, RootCAs: roots, MinVersion: tls.VersionTLS12}},
		caller: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatalf("listen for overload gate: %v", err)
	}
	g := &overloadGate{proxy: proxy, seen: map[string]int{}, failPaths: map[string]int{}}
	g.inFlight, g.cancel = context.WithCancel(context.Background())
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: time.Minute,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{serving}, MinVersion: tls.VersionTLS12}}
	go func() {
		if err := g.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.t.Errorf("overload gate: %v", err)
		}
	}()
	c.t.Cleanup(func() {
		g.mu.Lock()
		g.cancel()
		g.mu.Unlock()
		_ = g.srv.Close()
	})
	c.gate = g
	if err := writeKubeconfig(c.EdgeCloudKubeconfig, "https://"+ln.Addr().String(), c.pki.CAPEM, &c.pki.edge); err != nil {
		c.t.Fatalf("%v", err)
	}
}

// callerOrEdge forwards a request that carries a bearer token (a caller
// apiserver-lite acts for) without the edge's client certificate, which
// kube-apiserver would prefer over the token, and every other request
// with it.
type callerOrEdge struct{ edge, caller http.RoundTripper }

func (t callerOrEdge) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") != "" {
		return t.caller.RoundTrip(r)
	}
	return t.edge.RoundTrip(r)
}

// ServeHTTP answers 429 while overloaded and proxies otherwise.
func (g *overloadGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.seen[r.URL.Path]++
	failWith := g.failPaths[r.URL.Path]
	retryAfter, inFlight := g.retryAfter, g.inFlight
	if retryAfter > 0 {
		g.answered = append(g.answered, OverloadedRequest{At: time.Now(), Method: r.Method, Path: r.URL.Path,
			Watch: r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1"})
	}
	g.mu.Unlock()
	if failWith != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(failWith)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected by the test","code":%d}`, failWith)
		return
	}
	if retryAfter == 0 {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(inFlight, cancel)
		defer stop()
		g.proxy.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	secs := int(retryAfter / time.Second)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"Too many requests, please try again later.","reason":"TooManyRequests",`+
		`"details":{"retryAfterSeconds":%d},"code":429}`, secs)
}

// Overload makes the cloud answer apiserver-lite's every request with 429
// and Retry-After (whole seconds), and ends its requests in flight, until
// EndOverload. It needs Options.OverloadGate.
func (c *Cluster) Overload(retryAfter time.Duration) {
	c.t.Helper()
	g := c.mustGate()
	if retryAfter < time.Second {
		c.t.Fatalf("overload: Retry-After %s is under a second", retryAfter)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retryAfter = retryAfter
	g.cancel()
	g.inFlight, g.cancel = context.WithCancel(context.Background())
}

// EndOverload lets apiserver-lite's requests through again.
func (c *Cluster) EndOverload() {
	c.t.Helper()
	g := c.mustGate()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.retryAfter = 0
}

// OverloadedRequests returns the requests answered 429 so far.
func (c *Cluster) OverloadedRequests() []OverloadedRequest {
	c.t.Helper()
	g := c.mustGate()
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]OverloadedRequest(nil), g.answered...)
}

// FailPath makes the gate answer every request for path with status code
// (0 lets them through again). It needs Options.OverloadGate.
func (c *Cluster) FailPath(path string, code int) {
	c.t.Helper()
	g := c.mustGate()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failPaths[path] = code
}

// GateRequests is how many of apiserver-lite's requests for path reached
// the gate so far. It needs Options.OverloadGate.
func (c *Cluster) GateRequests(path string) int {
	c.t.Helper()
	g := c.mustGate()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[path]
}

func (c *Cluster) mustGate() *overloadGate {
	c.t.Helper()
	if c.gate == nil {
		c.t.Fatalf("overload gate: Options.OverloadGate is not set")
	}
	return c.gate
}
