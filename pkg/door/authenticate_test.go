package door

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

type authnRig struct {
	cloud *fakeCloud
	store *memStore
	link  *switchable
	clock *clocktesting.FakeClock
	pods  map[string]bool // "ns/name/uid" present in the local cache
}

func newAuthnRig(t *testing.T) *authnRig {
	rig := &authnRig{cloud: newFakeCloud(t), store: newMemStore(), link: &switchable{},
		clock: clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0)), pods: map[string]bool{}}
	rig.link.on.Store(true)
	return rig
}

// authenticator returns a fresh Authenticator (empty memory) on the rig's
// store, as after a restart.
func (rig *authnRig) authenticator(t *testing.T) *Authenticator {
	return NewAuthenticator(AuthenticatorConfig{NodeName: "n1", Reviews: rig.cloud.tokenClient(t), Store: rig.store,
		Pods:      func(ns, name, uid string) bool { return rig.pods[ns+"/"+name+"/"+uid] },
		Connected: rig.link.connected, OfflineGrace: DefaultOfflineAuthzGrace, Clock: rig.clock})
}

func authn(t *testing.T, a *Authenticator, token string) (requester, error) {
	t.Helper()
	r := httptest.NewRequest("GET", "https://node/api/v1/namespaces/a/configmaps/c", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return a.authenticate(r)
}

func TestAuthenticateTokens(t *testing.T) {
	sa := &authenticationv1.UserInfo{Username: "system:serviceaccount:a:sa", Groups: []string{"system:serviceaccounts"}}
	for _, tc := range []struct {
		name string
		// run prepares the rig and returns the token to present.
		run      func(t *testing.T, rig *authnRig) string
		wantUser string
	}{
		{name: "none", run: func(*testing.T, *authnRig) string { return "" }},
		{name: "online", wantUser: sa.Username, run: func(t *testing.T, rig *authnRig) string {
			tok := jwt(t, boundClaims(rig.clock.Now().Add(time.Hour).Unix(), "a", "p", "u1"))
			rig.cloud.setToken(tok, sa)
			return tok
		}},
		{name: "forged online", run: func(t *testing.T, rig *authnRig) string {
			return jwt(t, boundClaims(rig.clock.Now().Add(time.Hour).Unix(), "a", "p", "u1"))
		}},
		{name: "forged offline", run: func(t *testing.T, rig *authnRig) string {
			rig.link.on.Store(false)
			return jwt(t, boundClaims(rig.clock.Now().Add(time.Hour).Unix(), "a", "p", "u1"))
		}},
		{name: "cached offline", wantUser: sa.Username, run: func(t *testing.T, rig *authnRig) string {
			tok := reviewedBound(t, rig, sa, time.Hour)
			rig.link.on.Store(false)
			rig.clock.Step(30 * time.Minute)
			return tok
		}},
		{name: "expired offline", run: func(t *testing.T, rig *authnRig) string {
			tok := reviewedBound(t, rig, sa, time.Hour)
			rig.link.on.Store(false)
			rig.clock.Step(time.Hour)
			return tok
		}},
		{name: "deleted bound pod offline", run: func(t *testing.T, rig *authnRig) string {
			tok := reviewedBound(t, rig, sa, time.Hour)
			rig.link.on.Store(false)
			delete(rig.pods, "a/p/u1")
			return tok
		}},
		{name: "revoked online", run: func(t *testing.T, rig *authnRig) string {
			tok := reviewedBound(t, rig, sa, time.Hour)
			rig.cloud.setToken(tok, nil)
			return tok
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newAuthnRig(t)
			rig.pods["a/p/u1"] = true
			tok := tc.run(t, rig)
			c, err := authn(t, rig.authenticator(t), tok)
			if tc.wantUser == "" {
				if !errors.Is(err, errUnauthenticated) {
					t.Fatalf("got user %q err %v, want unauthenticated", c.user.Name, err)
				}
				return
			}
			if err != nil || c.user.Name != tc.wantUser || c.token != tok || c.node {
				t.Fatalf("got %+v, %v; want user %q with its token", c.user, err, tc.wantUser)
			}
		})
	}
}

// reviewedBound has the cloud review a token bound to pod a/p/u1 that
// expires after life, through an Authenticator whose memory is then lost.
func reviewedBound(t *testing.T, rig *authnRig, u *authenticationv1.UserInfo, life time.Duration) string {
	t.Helper()
	tok := jwt(t, boundClaims(rig.clock.Now().Add(life).Unix(), "a", "p", "u1"))
	rig.cloud.setToken(tok, u)
	if _, err := authn(t, rig.authenticator(t), tok); err != nil {
		t.Fatalf("review: %v", err)
	}
	for k := range rig.store.m {
		if slices.Contains([]string{k}, tok) || len(k) != len(offline.ReviewPrefix)+64 {
			t.Fatalf("store key %q is not the token's hash", k)
		}
	}
	return tok
}

func TestAuthenticateCachesReviews(t *testing.T) {
	rig := newAuthnRig(t)
	tok := jwt(t, map[string]any{"exp": rig.clock.Now().Add(time.Hour).Unix()})
	rig.cloud.setToken(tok, &authenticationv1.UserInfo{Username: "alice"})
	a := rig.authenticator(t)
	for range 3 {
		if _, err := authn(t, a, tok); err != nil {
			t.Fatal(err)
		}
	}
	if got := rig.cloud.tokenReviews.Load(); got != 1 {
		t.Fatalf("got %d token reviews within the cache TTL, want 1", got)
	}
	rig.clock.Step(tokenCacheTTL)
	if _, err := authn(t, a, tok); err != nil {
		t.Fatal(err)
	}
	if got := rig.cloud.tokenReviews.Load(); got != 2 {
		t.Fatalf("got %d token reviews after the cache TTL, want 2", got)
	}
}

func TestAuthenticateCloudErrorWhileOnline(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
		want error
	}{
		{"500 refuses", 500, errUnauthenticated},
		{"429 asks to retry", 429, errCloudBusy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newAuthnRig(t)
			sa := &authenticationv1.UserInfo{Username: "system:serviceaccount:a:sa"}
			rig.pods["a/p/u1"] = true
			tok := reviewedBound(t, rig, sa, time.Hour)
			rig.cloud.failWith.Store(int32(tc.code)) // connected, but the review fails
			if c, err := authn(t, rig.authenticator(t), tok); !errors.Is(err, tc.want) {
				t.Fatalf("got %+v, %v; want %v, never the stored review while the link is up", c.user, err, tc.want)
			}
			rig.link.on.Store(false) // offline, the stored review stands in
			if c, err := authn(t, rig.authenticator(t), tok); err != nil || c.user.Name != sa.Username {
				t.Fatalf("offline: got %+v, %v; want the stored review", c.user, err)
			}
		})
	}
}

func TestAuthenticateCachesRefusals(t *testing.T) {
	rig := newAuthnRig(t)
	a := rig.authenticator(t)
	for range 50 {
		if _, err := authn(t, a, "forged"); !errors.Is(err, errUnauthenticated) {
			t.Fatalf("got %v, want unauthenticated", err)
		}
	}
	if got := rig.cloud.tokenReviews.Load(); got != 1 {
		t.Fatalf("got %d token reviews of one forged token, want 1", got)
	}
	rig.clock.Step(failedTokenTTL)
	rig.cloud.setToken("forged", &authenticationv1.UserInfo{Username: "now-valid"})
	if c, err := authn(t, a, "forged"); err != nil || c.user.Name != "now-valid" {
		t.Fatalf("after the failure TTL: got %+v, %v; want a fresh review", c.user, err)
	}
}

func TestAuthenticateSharesConcurrentReviews(t *testing.T) {
	rig := newAuthnRig(t)
	rig.cloud.reviewGate = make(chan struct{})
	a := rig.authenticator(t)
	const callers = 20
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := authn(t, a, "forged")
			errs <- err
		}()
	}
	for rig.cloud.tokenReviews.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the others queue on the one review
	close(rig.cloud.reviewGate)
	for range callers {
		if err := <-errs; !errors.Is(err, errUnauthenticated) {
			t.Fatalf("got %v, want unauthenticated", err)
		}
	}
	if got := rig.cloud.tokenReviews.Load(); got > 2 {
		t.Fatalf("got %d token reviews for %d concurrent requests of one token, want at most 2", got, callers)
	}
}

func TestAuthenticateClientCertificate(t *testing.T) {
	rig := newAuthnRig(t)
	a := rig.authenticator(t)
	for _, tc := range []struct {
		name     string
		subject  pkix.Name
		verified bool
		wantErr  bool
		wantNode bool
	}{
		{name: "this node", subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}},
			verified: true, wantNode: true},
		{name: "other node", subject: pkix.Name{CommonName: "system:node:n2", Organization: []string{"system:nodes"}},
			verified: true},
		{name: "node name without group", subject: pkix.Name{CommonName: "system:node:n1"}, verified: true},
		{name: "unverified", subject: pkix.Name{CommonName: "system:node:n1"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert := &x509.Certificate{Subject: tc.subject}
			r := httptest.NewRequest("GET", "https://node/api/v1/pods", nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
			if tc.verified {
				r.TLS.VerifiedChains = [][]*x509.Certificate{{cert}}
			}
			c, err := a.authenticate(r)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got err %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (c.user.Name != tc.subject.CommonName || c.node != tc.wantNode || c.token != "") {
				t.Fatalf("got %+v node=%v, want %q node=%v", c.user, c.node, tc.subject.CommonName, tc.wantNode)
			}
		})
	}
	if got := rig.cloud.tokenReviews.Load(); got != 0 {
		t.Fatalf("got %d token reviews for certificates, want 0", got)
	}
}
