package holding

import (
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/rest"
)

// connStates records the last state of each connection a server saw.
type connStates struct {
	mu   sync.Mutex
	last map[net.Conn]http.ConnState // guarded by mu
}

func (c *connStates) record(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last[conn] = s
}

// open counts the connections not closed.
func (c *connStates) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.last {
		if s != http.StateClosed && s != http.StateHijacked {
			n++
		}
	}
	return n
}

// TestSelfReviewClosesItsConnection: the review is made at start only; its
// connection must not stay open (and answer PINGs) beside the sync's.
func TestSelfReviewClosesItsConnection(t *testing.T) {
	states := &connStates{last: map[net.Conn]http.ConnState{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&authenticationv1.SelfSubjectReview{
			Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "system:node:n1"}}})
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = states.record
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ask, err := SelfReview(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}})
	if err != nil {
		t.Fatalf("SelfReview: %v", err)
	}
	u, err := ask(t.Context())
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	if u.Username != "system:node:n1" {
		t.Errorf("got user %q, want system:node:n1", u.Username)
	}
	deadline := time.Now().Add(5 * time.Second)
	for states.open() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := states.open(); n != 0 {
		t.Errorf("got %d connections open after the review, want 0", n)
	}
}
