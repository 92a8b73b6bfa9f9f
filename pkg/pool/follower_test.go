package pool

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
)

// TestFollowerWatchesLeaderInJSON checks that a follower's watch of the
// leader's door asks for JSON alone: the leader serves its stored JSON
// as is, and protobuf only through its Go types, which may lack a field
// of a newer cloud.
func TestFollowerWatchesLeaderInJSON(t *testing.T) {
	var mu sync.Mutex
	var accepts []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		accepts = append(accepts, r.Header.Get("Accept"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"}}}` + "\n"))
	}))
	defer srv.Close()
	f := NewFollower(FollowerConfig{Stats: NewStats()})
	h := Holder{Node: "edge-a", Address: strings.TrimPrefix(srv.URL, "https://")}
	r := cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}}
	src, err := f.sourceOver(r, h, srv.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	w, err := src.LW.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "10"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	n := 0
	for range w.ResultChan() {
		n++
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 1 || len(accepts) != 1 || accepts[0] != "application/json" {
		t.Errorf("got %d events, Accept headers %q; want 1 event, asked for application/json alone", n, accepts)
	}
}
