package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// stalledCloud accepts every request and answers none until the test
// ends, as a cloud that is reachable but slow (overloaded, or restarting
// behind its load balancer) does. It records when the first
// SelfSubjectReview arrived.
type stalledCloud struct {
	srv *httptest.Server
	// release ends the stall: every request is answered 503 from then on.
	release func()
	mu      sync.Mutex
	// reviewAt is when the first SelfSubjectReview arrived; zero before.
	// Guarded by mu.
	reviewAt time.Time
}

func newStalledCloud(t *testing.T) *stalledCloud {
	c := &stalledCloud{}
	release := make(chan struct{})
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/selfsubjectreviews") {
			c.mu.Lock()
			if c.reviewAt.IsZero() {
				c.reviewAt = time.Now()
			}
			c.mu.Unlock()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	var once sync.Once
	c.release = func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { c.release(); c.srv.Close() })
	return c
}

func (c *stalledCloud) firstReview() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reviewAt
}

// TestRestartServesBeforeTheCloudAnswers: a restart on a synced store
// serves its first LIST without waiting for the cloud, even a cloud that
// takes every request and answers none.
func TestRestartServesBeforeTheCloudAnswers(t *testing.T) {
	cloud := newStalledCloud(t)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, cloud.srv.URL)
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("resources:\n  - {version: v1, resource: configmaps}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	// Node scope holds services whole; the store says auto chose node
	// scope before, so the restart takes it without asking.
	mustSeedStore(t, data, cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}})
	mustStoreScope(t, data, holding.ScopeNode)
	addr := mustFreeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--config", cfgFile, "--kubeconfig", kc, "--data-dir", data, "--listen-address", "",
			"--insecure-listen-address", addr, "--node-name", "n1", "--log-level", "error"})
	}()
	t.Cleanup(func() { cancel(); <-done })

	deadline := time.Now().Add(waitServing)
	for {
		resp, err := http.Get("http://" + addr + "/api/v1/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no LIST answered within %v", waitServing)
		}
		time.Sleep(10 * time.Millisecond)
	}
	served := time.Now()
	cloud.release() // a stalled request would hold the shutdown up
	// Serving must not have waited out the cloud's silence: it came before
	// the SelfSubjectReview had been pending for half the patience.
	if review := cloud.firstReview(); !review.IsZero() && served.Sub(review) >= holding.StartupPatience/2 {
		t.Errorf("first LIST answered %v after the SelfSubjectReview reached the silent cloud, want serving not to wait for it",
			served.Sub(review).Round(time.Millisecond))
	}
}

// waitServing bounds the start of the daemon in a test.
const waitServing = 20 * time.Second

// mustStoreScope records scope as the one auto chose before.
func mustStoreScope(t *testing.T, dir, scope string) {
	t.Helper()
	st, err := metastore.Open(context.Background(), filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()
	if err := st.PutMeta(context.Background(), holding.MetaKey, []byte(scope)); err != nil {
		t.Fatalf("store scope: %v", err)
	}
}
