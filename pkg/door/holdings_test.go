package door

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http/httptest"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
)

// fakeHoldings holds endpointslices for pods and records what it was told.
type fakeHoldings struct {
	mu   sync.Mutex
	told []Pod // guarded by mu
}

func (h *fakeHoldings) ForPods(a requestinfo.Attributes) bool { return a.Resource == "endpointslices" }

func (h *fakeHoldings) Authorized(_ context.Context, p Pod, _ requestinfo.Attributes) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.told = append(h.told, p)
}

func TestSecureDoorHoldings(t *testing.T) {
	const slices = "/apis/discovery.k8s.io/v1/endpointslices"
	nodeCert := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}
	proxyPod := Pod{Namespace: "kube-system", Name: "kube-proxy-x", UID: "u1", ServiceAccount: "kube-proxy"}
	for _, tc := range []struct {
		name, path, token string
		node              bool
		wantCode          int
		wantTold          []Pod
	}{
		{"pod-bound token, allowed", slices, "proxy", false, 200, []Pod{proxyPod}},
		{"pod-bound token, denied", "/api/v1/secrets", "proxy", false, 403, nil},
		{"token bound to no pod", slices, "plain", false, 200, nil},
		{"the node: held for pods, asked", slices, "", true, 403, nil},
		{"the node: its own view", "/api/v1/namespaces/b/secrets/s", "", true, 200, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloud := newFakeCloud(t)
			cloud.setToken("proxy", &authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:kube-proxy",
				Extra: map[string]authenticationv1.ExtraValue{
					"authentication.kubernetes.io/pod-name": {"kube-proxy-x"}, "authentication.kubernetes.io/pod-uid": {"u1"}}})
			cloud.setToken("plain", &authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:legacy"})
			cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
				return s.ResourceAttributes != nil && s.ResourceAttributes.Resource == "endpointslices" &&
					s.User != "system:node:n1"
			}
			fwd, err := NewForwarder(cloud.config())
			if err != nil {
				t.Fatal(err)
			}
			held := &fakeHoldings{}
			h := Secure(&recorder{}, SecureConfig{
				Authenticator: NewAuthenticator(AuthenticatorConfig{NodeName: "n1", Reviews: cloud.tokenClient(t)}),
				Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
				Forwarder:     fwd, Holdings: held,
			})
			r := httptest.NewRequest("GET", "https://127.0.0.1:10550"+tc.path, nil)
			if tc.node {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{nodeCert},
					VerifiedChains: [][]*x509.Certificate{{nodeCert}}}
			} else {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantCode {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, tc.wantCode)
			}
			if len(held.told) != len(tc.wantTold) || (len(tc.wantTold) == 1 && held.told[0] != tc.wantTold[0]) {
				t.Fatalf("got holdings told %+v, want %+v", held.told, tc.wantTold)
			}
		})
	}
}
