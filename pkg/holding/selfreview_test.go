package holding

import (
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
)

// TestSelfReviewLeavesItsConnectionToTheSyncs: the review made at start
// and the clients of the same configuration built after it (the syncs')
// cost the cloud one TLS connection between them, not one each.
func TestSelfReviewLeavesItsConnectionToTheSyncs(t *testing.T) {
	var accepted atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&authenticationv1.SelfSubjectReview{
			Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "system:node:n1"}}})
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cloud := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	link.ConfigureTransport(cloud, link.NewConns(nil))
	ask, err := SelfReview(cloud)
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
	hc, err := rest.HTTPClientFor(cloud) // a sync's client, built after the review
	if err != nil {
		t.Fatalf("HTTPClientFor: %v", err)
	}
	resp, err := hc.Get(srv.URL + "/api")
	if err != nil {
		t.Fatalf("sync request: %v", err)
	}
	_ = resp.Body.Close()
	if got := accepted.Load(); got != 1 {
		t.Errorf("got %d connections accepted for the review and a later sync, want 1", got)
	}
}
