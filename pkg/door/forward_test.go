package door

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// TestForwarderActsAsCaller proves that the caller's transport carries
// its token and none of the daemon's credentials: no client certificate
// (which the cloud would prefer over the token) and no daemon token.
func TestForwarderActsAsCaller(t *testing.T) {
	var sawCert atomic.Bool
	var auth atomic.Value
	cloud := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawCert.Store(r.TLS != nil && len(r.TLS.PeerCertificates) > 0)
		auth.Store(r.Header.Get("Authorization"))
	}))
	cloud.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	cloud.StartTLS()
	defer cloud.Close()

	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("system:node:n1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	daemon := &rest.Config{Host: cloud.URL, BearerToken: "daemon-token", TLSClientConfig: rest.TLSClientConfig{
		Insecure: true, CertData: certPEM, KeyData: keyPEM}}
	// The daemon's own transport does present its certificate: the test
	// server can see one.
	own, err := rest.TransportFor(daemon)
	if err != nil {
		t.Fatal(err)
	}
	get := func(rt http.RoundTripper, header string) {
		t.Helper()
		req, _ := http.NewRequest("GET", cloud.URL+"/api/v1/namespaces/a/configmaps", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get(own, "")
	if !sawCert.Load() {
		t.Fatal("the daemon's transport sent no certificate: the test cannot tell")
	}
	f, err := NewForwarder(daemon)
	if err != nil {
		t.Fatal(err)
	}
	get(f.For("caller-token"), "Bearer spoofed")
	if sawCert.Load() {
		t.Fatal("got a client certificate on the caller's transport, want none")
	}
	if got := auth.Load(); got != "Bearer caller-token" {
		t.Fatalf("got Authorization %q, want the caller's token", got)
	}
}
