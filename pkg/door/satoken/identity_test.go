package satoken

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// reviewFixture is kube-apiserver's TokenReview answer for podToken()
// (with node claim) and for it without its node claim.
const (
	reviewWithNode = `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","status":{"authenticated":true,
"user":{"username":"system:serviceaccount:kube-system:kube-proxy","uid":"sa-uid-1",
"groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"],
"extra":{"authentication.kubernetes.io/credential-id":["JTI=jti-1"],
"authentication.kubernetes.io/node-name":["node-a"],"authentication.kubernetes.io/node-uid":["node-uid-a"],
"authentication.kubernetes.io/pod-name":["kube-proxy-x"],"authentication.kubernetes.io/pod-uid":["pod-uid-1"]}},
"audiences":["https://kubernetes.default.svc.cluster.local"]}}`
	reviewWithoutNode = `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","status":{"authenticated":true,
"user":{"username":"system:serviceaccount:kube-system:kube-proxy","uid":"sa-uid-1",
"groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"],
"extra":{"authentication.kubernetes.io/credential-id":["JTI=jti-1"],
"authentication.kubernetes.io/pod-name":["kube-proxy-x"],"authentication.kubernetes.io/pod-uid":["pod-uid-1"]}},
"audiences":["https://kubernetes.default.svc.cluster.local"]}}`
)

func TestIdentityEqualsTokenReview(t *testing.T) {
	key := newECKey(t, "k")
	for _, tc := range []struct {
		name   string
		edit   func(*tokenSpec)
		review string
	}{
		{"pod-bound with node claim", func(*tokenSpec) {}, reviewWithNode},
		{"pod-bound without node claim", func(s *tokenSpec) { s.private.Node = nil }, reviewWithoutNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr authenticationv1.TokenReview
			if err := json.Unmarshal([]byte(tc.review), &tr); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, key)
			spec := podToken()
			tc.edit(&spec)
			got, err := f.v.Verify(context.Background(), sign(t, key, spec), false)
			if err == nil {
				t.Fatalf("offline before any key was read: got ok, want not-local")
			}
			if got, err = f.v.Verify(context.Background(), sign(t, key, spec), true); err != nil {
				t.Fatal(err)
			}
			want := tr.Status.User
			extra := map[string][]string{}
			for k, v := range want.Extra {
				extra[k] = v
			}
			if got.Name != want.Username || got.UID != want.UID || !reflect.DeepEqual(got.Groups, want.Groups) ||
				!reflect.DeepEqual(got.Extra, extra) {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if !got.Expiry.Equal(spec.exp) {
				t.Errorf("expiry: got %v, want %v", got.Expiry, spec.exp)
			}
		})
	}
}
