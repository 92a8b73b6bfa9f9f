package door

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http/httptest"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestSecureDoorClusterScopeAuthorizesTheNode(t *testing.T) {
	nodeCert := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}
	for _, tc := range []struct {
		name         string
		clusterScope bool
		path         string
		wantCode     int
		wantSARs     int32
	}{
		{"node scope: the node's view", false, "/api/v1/namespaces/b/secrets/s", 200, 0},
		{"cluster scope: allowed", true, "/api/v1/namespaces/a/configmaps/c", 200, 1},
		{"cluster scope: denied", true, "/api/v1/namespaces/b/secrets/s", 403, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloud, rec, _ := secureRig(t)
			cloud.allow = func(s authorizationv1.SubjectAccessReviewSpec) bool {
				return s.User == "system:node:n1" && s.ResourceAttributes.Resource == "configmaps"
			}
			h := Secure(rec, SecureConfig{
				Authenticator: NewAuthenticator(AuthenticatorConfig{NodeName: "n1", Reviews: cloud.tokenClient(t)}),
				Authorizer:    NewAuthorizer(AuthorizerConfig{Reviews: cloud.sarClient(t)}),
				ClusterScope:  tc.clusterScope,
			})
			r := httptest.NewRequest("GET", "https://127.0.0.1:10550"+tc.path, nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{nodeCert},
				VerifiedChains: [][]*x509.Certificate{{nodeCert}}}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantCode || cloud.sars.Load() != tc.wantSARs {
				t.Fatalf("got %d with %d reviews, want %d with %d", w.Code, cloud.sars.Load(), tc.wantCode, tc.wantSARs)
			}
			if w.Code == 200 && (rec.rt != nil || rec.err != nil) {
				t.Fatalf("got forwarding %v/%v, want the daemon's (authorized per request)", rec.rt, rec.err)
			}
		})
	}
}

func TestInsecureDoorRefusesBrowsers(t *testing.T) {
	for _, tc := range []struct {
		name, method, header, value, contentType string
		body                                     string
		want                                     int
	}{
		{name: "kubectl get", method: "GET", want: 200},
		{name: "origin", method: "GET", header: "Origin", value: "https://evil.example", want: 403},
		{name: "fetch metadata", method: "GET", header: "Sec-Fetch-Site", value: "cross-site", want: 403},
		{name: "fetch mode", method: "POST", header: "Sec-Fetch-Mode", value: "no-cors", contentType: "application/json", body: "{}", want: 403},
		{name: "post without content type", method: "POST", body: "{}", want: 415},
		{name: "post as text", method: "POST", contentType: "text/plain", body: "{}", want: 415},
		{name: "post as form", method: "POST", contentType: "application/x-www-form-urlencoded", body: "a=b", want: 415},
		{name: "post json", method: "POST", contentType: "application/json; charset=utf-8", body: "{}", want: 200},
		{name: "merge patch", method: "PATCH", contentType: "application/merge-patch+json", body: "{}", want: 200},
		{name: "apply", method: "PATCH", contentType: "application/apply-patch+yaml", body: "a: b", want: 200},
		{name: "protobuf", method: "PUT", contentType: "application/vnd.kubernetes.protobuf", body: "k8s", want: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			r := httptest.NewRequest(tc.method, "http://127.0.0.1:10550/api/v1/namespaces/a/configmaps", nil)
			if tc.body != "" {
				r = httptest.NewRequest(tc.method, "http://127.0.0.1:10550/api/v1/namespaces/a/configmaps", stringsReader(tc.body))
			}
			if tc.header != "" {
				r.Header.Set(tc.header, tc.value)
			}
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			w := httptest.NewRecorder()
			Insecure(rec, InsecureConfig{}).ServeHTTP(w, r)
			if w.Code != tc.want || (rec.calls.Load() > 0) != (tc.want == 200) {
				t.Fatalf("got %d (handler calls %d), want %d", w.Code, rec.calls.Load(), tc.want)
			}
			if w.Code != 200 {
				checkStatusBody(t, w)
			}
		})
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
