//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// floodConnections is how many loopback connections flood one door at
	// once, each on its own HTTP/1.1 connection.
	floodConnections = 450
	// floodDuration is how long one door is flooded.
	floodDuration = 13 * time.Second
	// floodObserverPause paces the kubelet's and the tenant's requests
	// during a flood: about 130 requests each per door.
	floodObserverPause = 100 * time.Millisecond
	// floodRequestTimeout bounds one observed request; a slower answer
	// counts as a failure.
	floodRequestTimeout = 5 * time.Second
	// floodMinAnswered is the share of observed requests that must be
	// answered 200.
	floodMinAnswered = 0.99
)

// floodTally counts what one observer got during a flood.
type floodTally struct {
	mu        sync.Mutex
	codes     map[int]int     // guarded by mu; 0 is a transport error
	latencies []time.Duration // guarded by mu
}

func (f *floodTally) add(code int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.codes == nil {
		f.codes = map[int]int{}
	}
	f.codes[code]++
	f.latencies = append(f.latencies, d)
}

// check fails t unless at least floodMinAnswered of the requests got 200
// and none got 401.
func (f *floodTally) check(t *testing.T, who string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	for _, n := range f.codes {
		total += n
	}
	if total == 0 || float64(f.codes[http.StatusOK]) < floodMinAnswered*float64(total) {
		t.Errorf("%s during the flood: got %v (status: count, 0 a transport error), want at least %.0f%% of %d answered 200",
			who, f.codes, 100*floodMinAnswered, total)
	}
	if n := f.codes[http.StatusUnauthorized]; n > 0 {
		t.Errorf("%s during the flood: got 401 on %d requests, want none", who, n)
	}
	t.Logf("%s during the flood: %v, p99 %s", who, f.codes, f.p99Locked())
}

func (f *floodTally) p99Locked() time.Duration {
	if len(f.latencies) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), f.latencies...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, (len(s)*99+99)/100-1)]
}

// TestDoorsFlood floods each TLS door in turn with floodConnections
// loopback connections sending tokens nobody issued (half random
// JWT-shaped strings, half well-formed JWTs with a bad signature, a fresh
// one per request) while the kubelet's certificate reads its Node on its
// door and a tenant's pod-bound token reads a configmap on the pods' door:
// both must be answered 200, never 401. It also checks that the health
// details and /metrics are refused to anonymous callers and answered to
// the node.
func TestDoorsFlood(t *testing.T) {
	const ns = "tenant"
	pods := freeLoopbackAddress(t)
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns},
		EdgeArgs: []string{"--secure-listen-address", pods}})
	pod := createTenant(t, c, ns)
	reader := podToken(t, c, ns, "reader", pod)
	c.StartEdge()
	waitTenantRead(t, c, reader, ns)
	podsURL := "https://" + pods

	t.Run("anonymous details are refused", func(t *testing.T) { checkAnonymousDetails(t, c, podsURL) })
	for _, door := range []struct{ name, url string }{{"kubelet's door", c.DoorURL}, {"pods' door", podsURL}} {
		t.Run(door.name, func(t *testing.T) {
			kubelet, tenant := floodDoor(t, c, door.url, podsURL, reader, ns)
			kubelet.check(t, "the kubelet's certificate on its door")
			tenant.check(t, "the tenant's token on the pods' door")
		})
	}
}

// checkAnonymousDetails: the terse health paths answer anyone; the
// details and /metrics answer the node's certificate only.
func checkAnonymousDetails(t *testing.T, c *framework.Cluster, podsURL string) {
	node := nodeHTTPClient(t, c)
	for _, base := range []string{c.DoorURL, podsURL} {
		for path, want := range map[string]struct{ anonymous, node int }{
			"/readyz": {200, 200}, "/livez": {200, 200}, "/healthz": {200, 200},
			"/readyz?verbose": {401, 200}, "/livez?verbose": {401, 200}, "/metrics": {401, 200},
			"/readyz/no-such-check": {401, 404}, // no per-check paths are served; anonymous callers learn nothing
		} {
			if code := doorGet(t, c, base+path, "", nil); code != want.anonymous {
				t.Errorf("anonymous GET %s%s: got %d, want %d", base, path, code, want.anonymous)
			}
			if code, body := doorDo(t, node, "GET", base+path, "", nil); code != want.node {
				t.Errorf("the node's GET %s%s: got %d %.200s, want %d", base, path, code, body, want.node)
			}
		}
	}
}

// nodeHTTPClient is an HTTP/2 client with the node's client certificate
// that does not retry: every status is seen as the server sent it.
func nodeHTTPClient(t *testing.T, c *framework.Cluster) *http.Client {
	t.Helper()
	cfg := c.KubeletConfig()
	cfg.Timeout = floodRequestTimeout
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// floodDoor floods target for floodDuration while the kubelet and the
// tenant read, and returns what each got.
func floodDoor(t *testing.T, c *framework.Cluster, target, podsURL, token, ns string) (kubelet, tenant *floodTally) {
	ctx, stop := context.WithTimeout(t.Context(), floodDuration)
	defer stop()
	nodeClient, tenantClient := nodeHTTPClient(t, c), doorClient(c)
	nodeURL := c.DoorURL + "/api/v1/nodes/" + c.NodeName
	tenantURL := podsURL + "/api/v1/namespaces/" + ns + "/configmaps/tenant-cm"
	// Warm up: both hold a connection and the tenant's token is known, as
	// a running kubelet and pod are before a flood begins.
	observe(context.Background(), nodeClient, nodeURL, "", &floodTally{}, 1)
	observe(context.Background(), tenantClient, tenantURL, token, &floodTally{}, 1)
	kubelet, tenant = &floodTally{}, &floodTally{}
	var wg sync.WaitGroup
	for i := range floodConnections {
		wg.Go(func() { floodOne(ctx, c, target+"/api/v1/namespaces/"+ns+"/configmaps", i%2 == 0) })
	}
	wg.Go(func() { observe(ctx, nodeClient, nodeURL, "", kubelet, -1) })
	wg.Go(func() { observe(ctx, tenantClient, tenantURL, token, tenant, -1) })
	wg.Wait()
	return kubelet, tenant
}

// observe GETs target every floodObserverPause until ctx ends, or n times
// when n is positive, and tallies the answers.
func observe(ctx context.Context, client *http.Client, target, token string, tally *floodTally, n int) {
	for i := 0; n < 0 || i < n; i++ {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		tally.add(get(context.Background(), client, target, token), time.Since(start))
		select {
		case <-ctx.Done():
		case <-time.After(floodObserverPause):
		}
	}
}

// get GETs target with token and returns the status code, 0 on a
// transport error.
func get(ctx context.Context, client *http.Client, target, token string) int {
	ctx, cancel := context.WithTimeout(ctx, floodRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", target, nil)
	if err != nil {
		return 0
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// floodOne sends a fresh token on its own HTTP/1.1 connection until ctx
// ends: a forged JWT when forged, else a random JWT-shaped string.
func floodOne(ctx context.Context, c *framework.Cluster, target string, forged bool) {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.EdgeCA())
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{}, MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for ctx.Err() == nil {
		token := randomJWT()
		if forged {
			token = forgedJWT()
		}
		if get(ctx, client, target, token) == 0 {
			select { // a refused connection: do not spin
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// randomJWT is three random base64url segments.
func randomJWT() string {
	seg := func(n int) string {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return seg(36) + "." + seg(180) + "." + seg(256)
}

// forgedJWT is a well-formed service-account JWT, as kube issues them for
// the tenant, with a random signature.
func forgedJWT() string {
	enc := func(v any) string {
		raw, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(raw)
	}
	sig := make([]byte, 256)
	_, _ = rand.Read(sig)
	now := time.Now().Unix()
	claims := map[string]any{"iss": "https://kubernetes.default.svc.cluster.local", "aud": []string{"https://kubernetes.default.svc.cluster.local"},
		"sub": "system:serviceaccount:tenant:reader", "iat": now, "nbf": now, "exp": now + 3600,
		"jti":           fmt.Sprintf("%x", sig[:16]),
		"kubernetes.io": map[string]any{"namespace": "tenant", "serviceaccount": map[string]string{"name": "reader", "uid": "00000000-0000-0000-0000-000000000000"}}}
	return enc(map[string]string{"alg": "RS256", "kid": "forged"}) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString(sig)
}
