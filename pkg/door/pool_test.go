package door

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

// poolRig is a leader's pool door over rec, serving EndpointSlices and
// services; a follower's kube-proxy token is allowed to read
// EndpointSlices and services, a tenant's nothing.
func poolRig(t *testing.T, leading *atomic.Bool) (*fakeCloud, *recorder, http.Handler) {
	cloud := newFakeCloud(t)
	cloud.setToken("proxy-b", &authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:kube-proxy"})
	cloud.setToken("tenant", &authenticationv1.UserInfo{Username: "system:serviceaccount:shop:web"})
	cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
		ra := s.ResourceAttributes
		switch s.User {
		case "system:serviceaccount:kube-system:kube-proxy":
			return ra != nil && (ra.Resource == "endpointslices" || ra.Resource == "services")
		case "system:node:n2":
			return ra != nil && ra.Resource == "services"
		}
		return false
	}
	fwd, err := NewForwarder(cloud.config())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	served := map[schema.GroupVersionResource]bool{
		{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}: true,
		{Version: "v1", Resource: "services"}:                                  true,
	}
	secure := Secure(rec, SecureConfig{
		Authenticator: NewAuthenticator(AuthenticatorConfig{Reviews: cloud.tokenClient(t), Audiences: []string{"apiserver-lite-pool"},
			Pods: func(string, string, string) bool { return true }}),
		Authorizer:   NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
		Forwarder:    fwd,
		NeverForward: true,
	})
	return cloud, rec, Pool(secure, PoolConfig{Leading: func() (bool, <-chan struct{}) { return leading.Load(), nil },
		Serves: func(gvr schema.GroupVersionResource) bool { return served[gvr] }})
}

func TestPoolDoor(t *testing.T) {
	follower := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:n2", Organization: []string{"system:nodes"}}}
	const slices_ = "/apis/discovery.k8s.io/v1/endpointslices"
	for _, tc := range []struct {
		name, method, path, token string
		cert                      *x509.Certificate
		notLeading                bool
		wantCode                  int
		// wantReviews counts TokenReviews and SubjectAccessReviews: an
		// allowed list or watch asks the sibling verb too.
		wantReviews int32
	}{
		{name: "follower's pod token lists EndpointSlices", method: "GET", path: slices_, token: "proxy-b", wantCode: 200, wantReviews: 3},
		{name: "follower's pod token watches them", method: "GET", path: slices_ + "?watch=true&resourceVersion=5", token: "proxy-b",
			wantCode: 200, wantReviews: 3},
		{name: "follower's node certificate lists services", method: "GET", path: "/api/v1/services", cert: follower, wantCode: 200, wantReviews: 2},
		{name: "follower's node certificate: EndpointSlices forbidden", method: "GET", path: slices_, cert: follower,
			wantCode: 403, wantReviews: 1},
		{name: "tenant's token: 403", method: "GET", path: slices_, token: "tenant", wantCode: 403, wantReviews: 2},
		{name: "forged token: 401", method: "GET", path: slices_, token: "forged", wantCode: 401, wantReviews: 1},
		{name: "not held: 404, no review", method: "GET", path: "/api/v1/namespaces/a/secrets", token: "proxy-b", wantCode: 404},
		{name: "a write: 404, no review", method: "POST", path: "/apis/discovery.k8s.io/v1/namespaces/a/endpointslices",
			token: "proxy-b", wantCode: 404},
		{name: "token request: 404", method: "POST", path: "/api/v1/namespaces/kube-system/serviceaccounts/kube-proxy/token",
			token: "proxy-b", wantCode: 404},
		{name: "subresource: 404", method: "GET", path: "/api/v1/namespaces/a/services/s/status", token: "proxy-b", wantCode: 404},
		{name: "discovery: 404", method: "GET", path: "/apis", token: "proxy-b", wantCode: 404},
		{name: "not leading: 503, no review", method: "GET", path: slices_, token: "proxy-b", notLeading: true, wantCode: 503},
		{name: "terse health, anonymous", method: "GET", path: "/readyz", wantCode: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var leading atomic.Bool
			leading.Store(!tc.notLeading)
			cloud, rec, h := poolRig(t, &leading)
			r := httptest.NewRequest(tc.method, "https://10.0.0.1:10552"+tc.path, strings.NewReader(""))
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert}, VerifiedChains: [][]*x509.Certificate{{tc.cert}}}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			reviews := cloud.tokenReviews.Load() + cloud.sars.Load()
			if w.Code != tc.wantCode || reviews != tc.wantReviews {
				t.Fatalf("got %d after %d reviews, want %d after %d: %s", w.Code, reviews, tc.wantCode, tc.wantReviews, w.Body)
			}
			if w.Code == 200 && tc.path != "/readyz" && (rec.rt != nil || rec.err != caller.ErrNotForwardable) {
				t.Errorf("forwarding %v/%v, want never forwarded (ErrNotForwardable)", rec.rt, rec.err)
			}
			if tc.token != "" && cloud.tokenReviews.Load() > 0 {
				cloud.mu.Lock()
				auds := cloud.reviewedFor
				cloud.mu.Unlock()
				if !slices.Equal(auds, []string{"apiserver-lite-pool"}) {
					t.Errorf("TokenReview audiences %v, want [apiserver-lite-pool]", auds)
				}
			}
		})
	}
}

func TestPoolDoorEndsRequestsWhenLeadershipChanges(t *testing.T) {
	changed := make(chan struct{})
	ended := make(chan struct{})
	h := Pool(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // a watch, served until its request ends
		close(ended)
	}), PoolConfig{Leading: func() (bool, <-chan struct{}) { return true, changed },
		Serves: func(schema.GroupVersionResource) bool { return true }})
	go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "https://10.0.0.1:10552/api/v1/services?watch=true", nil))
	close(changed)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("a watch at the pool door outlived the leadership")
	}
}
