package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// offlineDaemon is a daemon started by startOfflineDaemon.
type offlineDaemon struct {
	base string // http://address of the loopback door
	data string // the data dir
	stop func() error
}

// startOfflineDaemon runs the daemon on a store seeded with one configmap
// and an unreachable cloud, and waits until it serves.
func startOfflineDaemon(t *testing.T, extra ...string) offlineDaemon {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatalf("write kubeconfig: %v", err)
	}
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("resources:\n  - {version: v1, resource: configmaps}\n"), 0o600); err != nil {
		t.Fatalf("write config: %v", err)
	}
	data := filepath.Join(dir, "data")
	mustSeedStore(t, data, cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}})
	addr := mustFreeAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	args := append([]string{"--config", cfgFile, "--kubeconfig", kc, "--data-dir", data, "--listen-address", "", "--insecure-listen-address", addr, "--sync-scope", "cluster",
		"--node-name", "n1", "--log-level", "error"}, extra...)
	go func() { done <- run(ctx, args) }()
	d := offlineDaemon{base: "http://" + addr, data: data}
	var stopped bool
	d.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(shutdownTimeout + 5*time.Second):
			t.Fatalf("run did not return within the shutdown bound")
			return nil
		}
	}
	t.Cleanup(func() { _ = d.stop() })
	mustGetEventually(t, d.base+"/livez")
	return d
}

// get returns the status code and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The daemon speaks sd_notify: READY=1 once serving, WATCHDOG=1 at half
// WATCHDOG_USEC while /livez passes, STOPPING=1 at shutdown.
func TestRunNotifiesSystemd(t *testing.T) {
	ch := fakeNotifySocket(t)
	t.Setenv("WATCHDOG_USEC", "400000") // 400 ms: pings every 200 ms
	d := startOfflineDaemon(t)
	if got := mustReceive(t, ch, "READY=1"); !strings.Contains(got, "STATUS=cloud unreachable, serving last known state; 1/1 resources loaded") {
		t.Errorf("READY message: got %q, want the offline status line", got)
	}
	if code, _ := get(t, d.base+"/api/v1/namespaces/ns/configmaps/kept"); code != http.StatusOK {
		t.Errorf("GET after READY=1: got %d, want 200", code)
	}
	mustReceive(t, ch, "WATCHDOG=1")
	mustReceive(t, ch, "WATCHDOG=1")
	if err := d.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	mustReceive(t, ch, "STOPPING=1")
}

// Offline, the daemon is live and ready (serving the stored state is its
// job), says why in ?verbose, and answers /metrics itself.
func TestRunHealthAndMetricsOffline(t *testing.T) {
	d := startOfflineDaemon(t)
	code, body := get(t, d.base+"/readyz?verbose")
	for _, want := range []string{
		"[+]store-writable ok\n", "[+]data-loaded:configmaps ok\n",
		"cloud-link: disconnected (informational, does not affect readiness: the last known state is served)\n",
		"readyz check passed\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz?verbose: got %q, want it to contain %q", body, want)
		}
	}
	if code != http.StatusOK {
		t.Errorf("/readyz: got %d, want 200 offline", code)
	}
	if code, body := get(t, d.base+"/livez"); code != http.StatusOK || body != "ok" {
		t.Errorf("/livez: got %d %q, want 200 ok", code, body)
	}
	if code, body := get(t, d.base+"/readyz/data-loaded:configmaps?verbose"); code != http.StatusOK ||
		body != "[+]data-loaded:configmaps ok\nreadyz check passed\n" {
		t.Errorf("/readyz/data-loaded:configmaps: got %d %q, want that check alone", code, body)
	}
	if code, _ := get(t, d.base+"/livez/no-such-check"); code != http.StatusNotFound {
		t.Errorf("/livez/no-such-check: got %d, want 404 (never proxied)", code)
	}
	_, body = get(t, d.base+"/metrics")
	for _, want := range []string{
		`apiserver_watch_cache_resource_version{resource="configmaps"} 42`,
		`apiserver_storage_objects{resource="configmaps"} 1`,
		`apiserver_lite_cloud_link_up 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(body, `apiserver_request_total{code="200",door="insecure",resource="",verb="get"} `) {
		t.Errorf("/metrics lacks the health requests")
	}
	mustMetricEventually(t, d.base, `apiserver_lite_cloud_errors_total{code="transport",resource="configmaps"} `)
	_, body = get(t, d.base+operations.PathStatus)
	var doc operations.Status
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("status: %v in %s", err, body)
	}
	if doc.Link != "down" || len(doc.Resources) != 1 || doc.Resources[0].ResourceVersion != 42 || doc.Resources[0].Objects != 1 {
		t.Errorf("status: got %+v, want link down and configmaps at RV 42 with 1 object", doc)
	}
}

// mustMetricEventually scrapes until a line starts with prefix.
func mustMetricEventually(t *testing.T, base, prefix string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, body := get(t, base+operations.PathMetrics); strings.Contains(body, "\n"+prefix) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("/metrics never had %q", prefix)
}
