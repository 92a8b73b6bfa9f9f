package satoken

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeDiscovery is a cloud that publishes keys only to a minted token and
// names another host as jwks_uri.
type fakeDiscovery struct {
	mu   sync.Mutex
	seen []string // "<path> <authorization>"
}

func (d *fakeDiscovery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.seen = append(d.seen, r.URL.Path+" "+r.Header.Get("Authorization"))
	d.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer minted" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
		return
	}
	switch r.URL.Path {
	case discoveryPath:
		_, _ = w.Write([]byte(`{"issuer":"` + testIssuer + `","jwks_uri":"https://elsewhere.example/keys"}`))
	case jwksPath:
		_, _ = w.Write([]byte(`{"keys":[]}`))
	default:
		http.NotFound(w, r)
	}
}

func (d *fakeDiscovery) requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

func TestCloudFetcherMintsWhenRefused(t *testing.T) {
	d := &fakeDiscovery{}
	srv := httptest.NewServer(d)
	defer srv.Close()
	clk := testingclock.NewFakeClock(testStart)
	mints := 0
	fetch, err := CloudFetcher(&rest.Config{Host: srv.URL, BearerToken: "node"}, func(context.Context) (Minted, error) {
		mints++
		return Minted{Token: "minted", Audiences: []string{"api"}}, nil
	}, clk)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		pub, err := fetch(context.Background())
		if err != nil || pub.Issuer != testIssuer || string(pub.JWKS) != `{"keys":[]}` || !slices.Equal(pub.Audiences, []string{"api"}) {
			t.Fatalf("fetch %d: got %+v, %v; want the issuer, the keys and the minted audiences", i, pub, err)
		}
	}
	want := []string{discoveryPath + " Bearer node", discoveryPath + " Bearer minted", jwksPath + " Bearer minted",
		discoveryPath + " Bearer minted", jwksPath + " Bearer minted"}
	if got := d.requests(); !slices.Equal(got, want) {
		t.Fatalf("requests: got %q, want %q (the node's credentials tried once, never jwks_uri's host)", got, want)
	}
	if mints != 2 {
		t.Fatalf("mints: got %d, want 2", mints)
	}
}

// TestCloudFetcherClosesTheMintedConnection: the connection of a read on
// a minted token is closed once the keys are read, rather than left open,
// answering HTTP/2 PINGs, until the cloud's idle timeout.
func TestCloudFetcherClosesTheMintedConnection(t *testing.T) {
	var open atomic.Int32
	srv := httptest.NewUnstartedServer(&fakeDiscovery{})
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cloud := &rest.Config{Host: srv.URL, BearerToken: "node", TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
	fetch, err := CloudFetcher(cloud, func(context.Context) (Minted, error) {
		return Minted{Token: "minted"}, nil
	}, testingclock.NewFakeClock(testStart))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetch(context.Background()); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for open.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := open.Load(); got != 0 {
		t.Errorf("connections open after the fetch: got %d, want 0", got)
	}
}
