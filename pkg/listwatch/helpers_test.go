package listwatch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// waitTimeout bounds how long a test waits for something that must happen;
// it only turns a hang into a failure and asserts nothing about speed.
const waitTimeout = 30 * time.Second

// daemonToken is the cloud credential the daemon's rest.Config carries.
const daemonToken = "daemon-token"

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	nodesGVR      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	leasesGVR     = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// infos is the discovery info of the test resources, as the cloud reports it.
var infos = map[schema.GroupVersionResource]metav1.APIResource{
	podsGVR: {Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod",
		Verbs: metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}, ShortNames: []string{"po"}},
	configMapsGVR: {Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap",
		Verbs: metav1.Verbs{"get", "list", "watch"}, ShortNames: []string{"cm"}},
	namespacesGVR: {Name: "namespaces", SingularName: "namespace", Kind: "Namespace",
		Verbs: metav1.Verbs{"get", "list", "watch"}, ShortNames: []string{"ns"}},
	nodesGVR: {Name: "nodes", SingularName: "node", Kind: "Node",
		Verbs: metav1.Verbs{"get", "list", "watch"}, ShortNames: []string{"no"}},
	leasesGVR: {Name: "leases", SingularName: "lease", Namespaced: true, Kind: "Lease",
		Verbs: metav1.Verbs{"get", "list", "watch"}},
}

func podJSON(ns, name string, rv uint64, node, phase string, labels map[string]string) string {
	return mustJSON(map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": ns, "name": name, "uid": "uid-" + name,
			"resourceVersion": strconv.FormatUint(rv, 10), "labels": labels,
			"creationTimestamp": "2026-01-02T03:04:05Z"},
		"spec": map[string]any{"nodeName": node, "restartPolicy": "Always", "schedulerName": "default-scheduler",
			"serviceAccountName": "default",
			"containers":         []any{map[string]any{"name": "app", "image": "registry.k8s.io/pause:3.10"}}},
		"status": map[string]any{"phase": phase, "podIP": "10.0.0.7"},
	})
}

func configMapJSON(ns, name string, rv uint64, data map[string]string) string {
	return mustJSON(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name, "uid": "uid-" + name,
			"resourceVersion": strconv.FormatUint(rv, 10)},
		"data": data,
	})
}

func namespaceJSON(name string, rv uint64) string {
	return mustJSON(map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "uid": "uid-" + name, "resourceVersion": strconv.FormatUint(rv, 10)},
		"spec":     map[string]any{"finalizers": []string{"kubernetes"}},
		"status":   map[string]any{"phase": "Active"},
	})
}

func nodeJSON(name string, rv uint64, unschedulable bool) string {
	return mustJSON(map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "uid": "uid-" + name, "resourceVersion": strconv.FormatUint(rv, 10)},
		"spec":     map[string]any{"unschedulable": unschedulable, "podCIDR": "10.244.0.0/24"},
	})
}

func leaseJSON(ns, name string, rv uint64) string {
	return mustJSON(map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": strconv.FormatUint(rv, 10)},
		"spec":     map[string]any{"holderIdentity": name},
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func MustObject(t testing.TB, raw string) *versioncache.Object {
	t.Helper()
	o, err := versioncache.NewObject([]byte(raw))
	if err != nil {
		t.Fatalf("NewObject(%s): %v", raw, err)
	}
	return o
}

// MustCache returns a ready cache of gvr holding raws at rv.
func MustCache(t testing.TB, gvr schema.GroupVersionResource, rv uint64, raws ...string) *versioncache.Cache {
	t.Helper()
	c := versioncache.New(gvr, 0)
	c.SetInfo(infos[gvr])
	objs := make([]*versioncache.Object, 0, len(raws))
	for _, raw := range raws {
		objs = append(objs, MustObject(t, raw))
	}
	c.Replace(objs, rv)
	t.Cleanup(c.Close)
	return c
}

func MustApply(t testing.TB, c *versioncache.Cache, rv uint64, typ watch.EventType, raw string) {
	t.Helper()
	if err := c.Apply([]versioncache.Event{{Type: typ, Object: MustObject(t, raw)}}, rv); err != nil {
		t.Fatalf("Apply(%s, rv %d): %v", typ, rv, err)
	}
}

// fixture is a local API over the standard test caches.
type fixture struct {
	pods, configMaps, namespaces, nodes, leases *versioncache.Cache
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return &fixture{
		pods: MustCache(t, podsGVR, 20,
			podJSON("default", "web-1", 11, "node-a", "Running", map[string]string{"app": "web", "tier": "front"}),
			podJSON("default", "web-2", 12, "node-b", "Running", map[string]string{"app": "web"}),
			podJSON("kube-system", "dns-1", 13, "node-a", "Pending", map[string]string{"app": "dns"})),
		configMaps: MustCache(t, configMapsGVR, 20,
			configMapJSON("default", "settings", 14, map[string]string{"mode": "edge"}),
			configMapJSON("kube-system", "kube-root-ca.crt", 15, map[string]string{"ca.crt": "x"})),
		namespaces: MustCache(t, namespacesGVR, 20, namespaceJSON("default", 3), namespaceJSON("kube-system", 4)),
		nodes:      MustCache(t, nodesGVR, 20, nodeJSON("node-a", 5, false), nodeJSON("node-b", 6, true)),
		leases:     MustCache(t, leasesGVR, 20, leaseJSON("kube-node-lease", "node-a", 7)),
	}
}

func (f *fixture) caches() []*versioncache.Cache {
	return []*versioncache.Cache{f.pods, f.configMaps, f.namespaces, f.nodes, f.leases}
}

// MustServer starts the local API for cfg, its callers acting as the node
// (as behind the insecure door).
func MustServer(t testing.TB, cfg Config) *httptest.Server {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(asNode(h))
	t.Cleanup(srv.Close)
	return srv
}

// asNode serves h as if every caller were the node.
func asNode(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(caller.AsNode(r.Context())))
	})
}

// response is a finished HTTP exchange.
type reply struct {
	code   int
	header http.Header
	body   string
}

// MustDo sends a request and reads the whole answer.
func MustDo(t testing.TB, method, url string, header http.Header, body string) reply {
	t.Helper()
	r, err := do(method, url, header, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// do sends a request and reads the whole answer; goroutines other than the
// test's use it directly.
func do(method, url string, header http.Header, body string) (reply, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return reply{}, fmt.Errorf("new request: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("read %s %s: %w", method, url, err)
	}
	return reply{code: resp.StatusCode, header: resp.Header, body: string(b)}, nil
}

// goGet sends a GET in the background; MustReceive collects the answer.
func goGet(url string) <-chan reply {
	done := make(chan reply, 1)
	go func() {
		r, err := do(http.MethodGet, url, nil, "")
		if err != nil {
			r = reply{code: -1, body: err.Error()}
		}
		done <- r
	}()
	return done
}

func MustReceive(t testing.TB, ch <-chan reply) reply {
	t.Helper()
	select {
	case r := <-ch:
		if r.code < 0 {
			t.Fatal(r.body)
		}
		return r
	case <-time.After(waitTimeout):
		t.Fatalf("no answer within %s", waitTimeout)
	}
	return reply{}
}

func MustGet(t testing.TB, url string) reply {
	t.Helper()
	return MustDo(t, http.MethodGet, url, nil, "")
}

// MustStatus decodes a Status body and checks the envelope every error shares.
func MustStatus(t testing.TB, r reply) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal([]byte(r.body), &st); err != nil {
		t.Fatalf("decode Status %q: %v", r.body, err)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure {
		t.Errorf("got kind %q apiVersion %q status %q, want Status v1 Failure", st.Kind, st.APIVersion, st.Status)
	}
	if int(st.Code) != r.code {
		t.Errorf("got body code %d, want HTTP status %d", st.Code, r.code)
	}
	if got := r.header.Get("Content-Type"); got != response.MediaTypeJSON {
		t.Errorf("got Content-Type %q, want %q", got, response.MediaTypeJSON)
	}
	retry := r.header.Get("Retry-After")
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		if want := strconv.Itoa(int(st.Details.RetryAfterSeconds)); retry != want {
			t.Errorf("got Retry-After %q, want %q", retry, want)
		}
	} else if retry != "" {
		t.Errorf("got Retry-After %q without retryAfterSeconds", retry)
	}
	return st
}

// cloudRequest is one request the fake cloud received.
type cloudRequest struct {
	method, path, query, auth, impersonate, body string
}

// fakeCloud is the cloud kube-apiserver at the network edge: it records
// requests and answers each with a fixed JSON body.
type fakeCloud struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []cloudRequest // guarded by mu
}

// cloudAnswer is the body the fake cloud sends for every request.
const cloudAnswer = `{"from":"cloud"}`

func newFakeCloud(t testing.TB) *fakeCloud {
	t.Helper()
	fc := &fakeCloud{}
	fc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fc.mu.Lock()
		fc.got = append(fc.got, cloudRequest{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery,
			auth: r.Header.Get("Authorization"), impersonate: r.Header.Get("Impersonate-User"), body: string(b)})
		fc.mu.Unlock()
		w.Header().Set("Content-Type", response.MediaTypeJSON)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(cloudAnswer))
	}))
	t.Cleanup(fc.srv.Close)
	return fc
}

func (fc *fakeCloud) config() *rest.Config {
	return &rest.Config{Host: fc.srv.URL, BearerToken: daemonToken}
}

func (fc *fakeCloud) requests() []cloudRequest {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]cloudRequest(nil), fc.got...)
}

// downCloud returns a rest.Config for a cloud that refuses connections.
func downCloud(t testing.TB) *rest.Config {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	return &rest.Config{Host: "http://" + addr, BearerToken: daemonToken}
}

// watchClient is an open watch response read frame by frame.
type watchClient struct {
	resp  *http.Response
	lines chan string
}

// MustWatch opens a watch and returns once its headers arrived.
func MustWatch(t testing.TB, url string) *watchClient {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("watch %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	wc := &watchClient{resp: resp, lines: make(chan string, 1024)}
	go func() {
		defer close(wc.lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
		for sc.Scan() {
			wc.lines <- sc.Text()
		}
	}()
	return wc
}

// MustFrame returns the next frame, failing if the stream ends first.
func (wc *watchClient) MustFrame(t testing.TB) string {
	t.Helper()
	select {
	case l, ok := <-wc.lines:
		if !ok {
			t.Fatalf("watch ended, want a frame")
		}
		return l
	case <-time.After(waitTimeout):
		t.Fatalf("no watch frame within %s", waitTimeout)
	}
	return ""
}

// MustEnd checks that the stream ends with no further frame.
func (wc *watchClient) MustEnd(t testing.TB) {
	t.Helper()
	select {
	case l, ok := <-wc.lines:
		if ok {
			t.Fatalf("got frame %s, want the stream to end", l)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("watch did not end within %s", waitTimeout)
	}
}

// frame is a decoded watch frame.
type frame struct {
	Type   string `json:"type"`
	Object struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

func MustDecodeFrame(t testing.TB, line string) frame {
	t.Helper()
	var f frame
	if err := json.Unmarshal([]byte(line), &f); err != nil {
		t.Fatalf("decode frame %q: %v", line, err)
	}
	return f
}

// waitForWaiters blocks until the fake clock has at least n timers, so a
// Step reaches the handler's timers.
func waitForWaiters(t testing.TB, c interface{ Waiters() int }, n int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for c.Waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d clock waiters, want %d", c.Waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func mustFieldSelector(t testing.TB, s string) fields.Selector {
	t.Helper()
	sel, err := fields.ParseSelector(s)
	if err != nil {
		t.Fatalf("parse field selector %q: %v", s, err)
	}
	return sel
}

func discardLogger() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}
