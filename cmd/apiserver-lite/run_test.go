package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unreachableKubeconfig names a cloud nothing listens on (port 1 on
// loopback refuses connections at once).
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

func mustFreeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// seededVersion is the cloud version an earlier run persisted.
const seededVersion = `{"major":"1","minor":"36","gitVersion":"v1.36.3","platform":"linux/amd64"}`

// mustSeedStore writes what an earlier run synced: discovery info, the
// cloud's version, one configmap and the watermark.
func mustSeedStore(t *testing.T, dir string, r cloudsync.Resource) {
	t.Helper()
	ctx := context.Background()
	st, err := metastore.Open(ctx, filepath.Join(dir, dbFile))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()
	info, _ := json.Marshal(metav1.APIResource{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Version: "v1", Verbs: metav1.Verbs{"get", "list", "watch"}})
	if err := st.PutMeta(ctx, r.InfoKey(), info); err != nil {
		t.Fatalf("put info: %v", err)
	}
	if err := st.PutMeta(ctx, cloudsync.VersionKey, []byte(seededVersion)); err != nil {
		t.Fatalf("put version: %v", err)
	}
	raw := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"kept","resourceVersion":"41"},"data":{"k":"v"}}`
	op := metastore.Op{Object: metastore.Object{Namespace: "ns", Name: "kept", RV: 41, Raw: []byte(raw)}}
	if err := st.Apply(ctx, r.Key(), []metastore.Op{op}, 42); err != nil {
		t.Fatalf("seed: %v", err)
	}
}

// With the cloud unreachable, a restarted daemon serves the persisted state
// and cloud version, answers writes with 503, and shuts down cleanly when cancelled.
func TestRunServesPersistedStateOffline(t *testing.T) {
	d := startOfflineDaemon(t)
	base := d.base
	body := mustGetEventually(t, base+"/api/v1/namespaces/ns/configmaps/kept")
	if want := `"resourceVersion":"41"`; !strings.Contains(body, want) {
		t.Errorf("GET persisted configmap: got %s, want it to contain %s", body, want)
	}
	if body := mustGetEventually(t, base+"/api/v1/configmaps"); !strings.Contains(body, `"metadata":{"resourceVersion":"42"}`) {
		t.Errorf("LIST: got %s, want list RV 42", body)
	}
	if body := mustGetEventually(t, base+"/version"); !strings.Contains(body, `"gitVersion": "v1.36.3"`) {
		t.Errorf("/version: got %s, want the persisted cloud version", body)
	}
	resp, err := http.Post(base+"/api/v1/namespaces/ns/configmaps", "application/json", nil)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("write while offline: got %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	if err := d.stop(); err != nil {
		t.Errorf("run: got %v, want nil after cancel", err)
	}
	st, err := metastore.Open(context.Background(), filepath.Join(d.data, dbFile))
	if err != nil {
		t.Fatalf("reopen after shutdown: %v", err)
	}
	defer st.Close()
	if err := st.IntegrityCheck(context.Background()); err != nil {
		t.Errorf("integrity after shutdown: %v", err)
	}
}

// mustGetEventually GETs url until it answers 200, while the daemon starts.
func mustGetEventually(t *testing.T, url string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return string(b)
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("GET %s: got %s, want 200", url, last)
	return ""
}
