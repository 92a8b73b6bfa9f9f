package link

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// watchServer answers a watch (watch=true) with 200 and an open stream
// until the client goes or the test ends, a watch of the name "gone" with
// 410, and anything else with an empty list.
func watchServer(t *testing.T) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") != "true" && r.URL.Query().Get("watch") != "1":
			_, _ = w.Write([]byte(`{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`))
		case r.URL.Query().Get("fieldSelector") == "metadata.name=gone":
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}`))
		default:
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-done:
			}
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

// TestOpenWatchesCountsClientGoWatches: a client-go watch counts as open
// once answered and as closed once stopped; lists, a watch the cloud
// refused and a watch=false read never count.
func TestOpenWatchesCountsClientGoWatches(t *testing.T) {
	srv := watchServer(t)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	conns := NewConns(nil)
	ConfigureTransport(cfg, conns)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secrets := cs.CoreV1().Secrets("ns")
	check := func(step string, want int) {
		t.Helper()
		if got := conns.OpenWatches(); got != want {
			t.Errorf("%s: got %d open watches, want %d", step, got, want)
		}
	}
	if _, err := secrets.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v", err)
	}
	check("after a list", 0)
	if _, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=gone"}); err == nil {
		t.Fatal("watch answered 410: got no error")
	}
	check("after a refused watch", 0)
	a, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=a"})
	if err != nil {
		t.Fatalf("watch a: %v", err)
	}
	b, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b"})
	if err != nil {
		t.Fatalf("watch b: %v", err)
	}
	check("with two watches", 2)
	a.Stop()
	waitOpen(t, conns, 1)
	a.Stop()
	check("after a second Stop of the same watch", 1)
	b.Stop()
	waitOpen(t, conns, 0)
}

// waitOpen waits until conns counts want open watches: a stopped watch's
// body is closed by client-go's receiving goroutine.
func waitOpen(t *testing.T, conns *Conns, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for conns.OpenWatches() != want {
		if time.Now().After(deadline) {
			t.Fatalf("got %d open watches, want %d", conns.OpenWatches(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIsWatch(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"", false},
		{"watch=true", true},
		{"watch=1", true},
		{"allowWatchBookmarks=true&watch=true&timeoutSeconds=300", true},
		{"watch=false", false},
		{"watch=0", false},
		{"allowWatchBookmarks=true", false},
		{"sendInitialEvents=true&watch=true", true},
		{"watch=nonsense", false},
	} {
		t.Run(tc.query, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/secrets?"+tc.query, nil)
			if got := isWatch(req.URL); got != tc.want {
				t.Errorf("isWatch(%q): got %v, want %v", tc.query, got, tc.want)
			}
		})
	}
}

// TestWatchBodyClosesOnce: a body closed twice (by its watch's Stop and by
// its reader at the stream's end) counts its watch closed once.
func TestWatchBodyClosesOnce(t *testing.T) {
	var open atomic.Int64
	open.Store(2)
	b := &watchBody{ReadCloser: io.NopCloser(strings.NewReader("")), open: &open}
	for range 2 {
		if err := b.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if got := open.Load(); got != 1 {
		t.Errorf("after two Closes: got %d open, want 1", got)
	}
}
