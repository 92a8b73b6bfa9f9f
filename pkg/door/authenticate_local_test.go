package door

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
)

const (
	localIssuer   = "https://issuer.test"
	localAudience = "https://api.test"
)

// localRig is an authentication rig whose authenticator verifies the
// node's pods' tokens locally with keys the test signs with.
type localRig struct {
	*authnRig
	key  *ecdsa.PrivateKey
	pods map[string]satoken.Pod // namespace/name
}

func newLocalRig(t *testing.T) *localRig {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &localRig{authnRig: newAuthnRig(t), key: key, pods: map[string]satoken.Pod{"a/p": {UID: "pod-1"}}}
}

func (rig *localRig) authenticator(t *testing.T) *Authenticator {
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: rig.key.Public(), KeyID: "k", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	v := satoken.New(satoken.Config{NodeName: "n1", Store: rig.store, Clock: rig.clock,
		Fetch: func(context.Context) (satoken.Published, error) {
			return satoken.Published{Issuer: localIssuer, JWKS: jwks}, nil
		},
		Pods: func(ns, name string) (satoken.Pod, error) {
			if p, ok := rig.pods[ns+"/"+name]; ok {
				return p, nil
			}
			return satoken.Pod{}, satoken.ErrPodNotFound
		}})
	v.Load(context.Background())
	a := rig.authnRig.authenticator(t)
	a.cfg.Local = v
	return a
}

// saToken signs a token of service account a/sa, bound to pod (none when
// empty) on node (no node claim when empty).
func (rig *localRig) saToken(t *testing.T, pod, podUID, node string) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: rig.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k"))
	if err != nil {
		t.Fatal(err)
	}
	now := rig.clock.Now()
	k := map[string]any{"namespace": "a", "serviceaccount": map[string]string{"name": "sa", "uid": "sa-1"}}
	if pod != "" {
		k["pod"] = map[string]string{"name": pod, "uid": podUID}
	}
	if node != "" {
		k["node"] = map[string]string{"name": node, "uid": "node-uid"}
	}
	tok, err := josejwt.Signed(signer).Claims(map[string]any{"kubernetes.io": k}).Claims(josejwt.Claims{
		Issuer: localIssuer, Subject: "system:serviceaccount:a:sa", Audience: josejwt.Audience{localAudience},
		IssuedAt: josejwt.NewNumericDate(now), NotBefore: josejwt.NewNumericDate(now),
		Expiry: josejwt.NewNumericDate(now.Add(time.Hour)), ID: "jti-" + pod + node}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// reviewed makes the fake cloud accept tok as a/sa.
func (rig *localRig) reviewed(tok string) {
	rig.cloud.setToken(tok, &authenticationv1.UserInfo{Username: "system:serviceaccount:a:sa", UID: "sa-1",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:a", "system:authenticated"}})
}

func TestAuthenticateLocally(t *testing.T) {
	rig := newLocalRig(t)
	rig.cloud.mu.Lock()
	rig.cloud.audiences = []string{localAudience}
	rig.cloud.mu.Unlock()
	a := rig.authenticator(t)
	// The first review teaches the API audience and the service account.
	first := rig.saToken(t, "", "", "")
	rig.reviewed(first)
	if _, err := authn(t, a, first); err != nil {
		t.Fatalf("token bound to no pod, online: %v", err)
	}
	if got := rig.cloud.tokenReviews.Load(); got != 1 {
		t.Fatalf("reviews of a token bound to no pod: got %d, want 1", got)
	}
	for _, tc := range []struct {
		name       string
		pod, node  string
		podUID     string
		online     bool
		wantErr    bool
		wantReview bool
	}{
		{name: "own pod, online", pod: "p", podUID: "pod-1", node: "n1", online: true},
		{name: "own pod, offline", pod: "p", podUID: "pod-1", node: "n1"},
		{name: "own pod without node claim, offline", pod: "p", podUID: "pod-1"},
		{name: "deleted pod, online", pod: "gone", podUID: "pod-2", node: "n1", online: true, wantErr: true},
		{name: "pod UID differs, online", pod: "p", podUID: "pod-old", node: "n1", online: true, wantErr: true},
		{name: "pod on another node, online", pod: "q", podUID: "pod-3", node: "n2", online: true, wantReview: true},
		{name: "pod on another node, offline", pod: "q", podUID: "pod-4", node: "n2", wantErr: true},
		{name: "no pod, online", online: true, wantReview: true},
		{name: "no pod, offline", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig.link.on.Store(tc.online)
			tok := rig.saToken(t, tc.pod, tc.podUID, tc.node)
			if tc.wantReview || !tc.online {
				rig.reviewed(tok) // the cloud would accept it
			}
			before := rig.cloud.tokenReviews.Load()
			c, err := authn(t, a, tok)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got err %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, errUnauthenticated) {
				t.Fatalf("got %v, want errUnauthenticated", err)
			}
			if got := rig.cloud.tokenReviews.Load() - before; (got == 1) != tc.wantReview || got > 1 {
				t.Fatalf("reviews: got %d, want review %v", got, tc.wantReview)
			}
			if err == nil && c.user.Name != "system:serviceaccount:a:sa" {
				t.Fatalf("user: got %q, want system:serviceaccount:a:sa", c.user.Name)
			}
		})
	}
}

// TestLocalIdentityEqualsReview: the identity a pod's token gets on the
// node is the one the cloud's review gave (every field, as decisions are
// keyed on all of them).
func TestLocalIdentityEqualsReview(t *testing.T) {
	rig := newLocalRig(t)
	a := rig.authenticator(t)
	tok := rig.saToken(t, "p", "pod-1", "n1")
	want := authenticationv1.UserInfo{Username: "system:serviceaccount:a:sa", UID: "sa-1",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:a", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{
			"authentication.kubernetes.io/credential-id": {"JTI=jti-pn1"},
			"authentication.kubernetes.io/node-name":     {"n1"}, "authentication.kubernetes.io/node-uid": {"node-uid"},
			"authentication.kubernetes.io/pod-name": {"p"}, "authentication.kubernetes.io/pod-uid": {"pod-1"}}}
	rig.cloud.setToken(tok, &want)
	rig.cloud.mu.Lock()
	rig.cloud.audiences = []string{localAudience}
	rig.cloud.mu.Unlock()
	reviewed, err := authn(t, a, tok) // audience unknown yet: reviewed
	if err != nil {
		t.Fatal(err)
	}
	local, err := authn(t, rig.authenticator(t), tok) // a fresh memory, the audience stored
	if err != nil {
		t.Fatal(err)
	}
	if got := rig.cloud.tokenReviews.Load(); got != 1 {
		t.Fatalf("reviews: got %d, want 1", got)
	}
	if !reflect.DeepEqual(local.user, reviewed.user) {
		t.Fatalf("local identity %+v differs from the review's %+v", local.user, reviewed.user)
	}
}
