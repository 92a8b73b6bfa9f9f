package satoken

import (
	"context"
	"errors"
	"testing"
	"time"
)

// outcome names Verify's result for tables.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrInvalid):
		return "invalid"
	case errors.Is(err, ErrNotLocal):
		return "not-local"
	}
	return "other: " + err.Error()
}

func TestVerifySignature(t *testing.T) {
	rsaKey, ecKey := newRSAKey(t, "rsa-1"), newECKey(t, "ec-1")
	otherRSA, otherEC := newRSAKey(t, "rsa-1"), newECKey(t, "ec-1")
	for _, tc := range []struct {
		name      string
		published []signingKey
		signer    signingKey
		want      string
	}{
		{"RS256", []signingKey{rsaKey}, rsaKey, "ok"},
		{"ES256", []signingKey{ecKey}, ecKey, "ok"},
		{"both published, ES256", []signingKey{rsaKey, ecKey}, ecKey, "ok"},
		{"RS256 by another key with the same kid", []signingKey{rsaKey}, otherRSA, "invalid"},
		{"ES256 by another key with the same kid", []signingKey{ecKey}, otherEC, "invalid"},
		{"signed by an unknown kid", []signingKey{rsaKey}, newRSAKey(t, "rsa-2"), "not-local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.published...)
			_, err := f.v.Verify(context.Background(), sign(t, tc.signer, podToken()), true)
			if got := outcome(err); got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

func TestVerifyNotJWT(t *testing.T) {
	f := newFixture(t, newRSAKey(t, "k"))
	for _, tok := range []string{"", "abc", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", "{\"a\":1}"} {
		if _, err := f.v.Verify(context.Background(), tok, true); outcome(err) != "not-local" {
			t.Errorf("Verify(%q): got %s, want not-local", tok, outcome(err))
		}
	}
}

func TestUnknownKeyRefreshesOncePerInterval(t *testing.T) {
	oldKey, newKey := newRSAKey(t, "old"), newRSAKey(t, "new")
	f := newFixture(t, oldKey)
	ctx := context.Background()
	if _, err := f.v.Verify(ctx, sign(t, oldKey, podToken()), true); err != nil {
		t.Fatalf("first token: %v", err)
	}
	if got := f.cloud.count(); got != 1 {
		t.Fatalf("reads after the first token: got %d, want 1", got)
	}
	forged := sign(t, newKey, podToken())
	for i := range 5 {
		if _, err := f.v.Verify(ctx, forged, true); outcome(err) != "not-local" {
			t.Fatalf("unknown kid %d: got %s, want not-local", i, outcome(err))
		}
	}
	if got := f.cloud.count(); got != 1 {
		t.Fatalf("reads within the interval: got %d, want 1", got)
	}
	f.cloud.publish(jwks(t, oldKey, newKey))
	f.clock.Step(unknownKeyRefreshInterval)
	if _, err := f.v.Verify(ctx, forged, true); err != nil {
		t.Fatalf("after the interval with the key published: %v", err)
	}
	if got := f.cloud.count(); got != 2 {
		t.Fatalf("reads after the interval: got %d, want 2", got)
	}
	offline := sign(t, newRSAKey(t, "third"), podToken())
	f.clock.Step(unknownKeyRefreshInterval)
	if _, err := f.v.Verify(ctx, offline, false); outcome(err) != "not-local" {
		t.Fatalf("unknown kid offline: got %s, want not-local", outcome(err))
	}
	if got := f.cloud.count(); got != 2 {
		t.Fatalf("reads offline: got %d, want 2", got)
	}
}

func TestVerifyClaims(t *testing.T) {
	key := newRSAKey(t, "k")
	leeway := time.Minute
	for _, tc := range []struct {
		name    string
		edit    func(*tokenSpec)
		advance time.Duration
		want    string
	}{
		{"valid", func(*tokenSpec) {}, 0, "ok"},
		{"another issuer", func(s *tokenSpec) { s.issuer = "https://oidc.example" }, 0, "not-local"},
		{"unknown audience", func(s *tokenSpec) { s.audience = []string{"vault"} }, 0, "not-local"},
		{"one known audience of two", func(s *tokenSpec) { s.audience = []string{"vault", testAudience} }, 0, "ok"},
		{"no audience", func(s *tokenSpec) { s.audience = nil }, 0, "not-local"},
		{"expired beyond the leeway", func(*tokenSpec) {}, time.Hour + leeway + time.Second, "invalid"},
		{"expired within the leeway", func(*tokenSpec) {}, time.Hour + leeway/2, "ok"},
		{"not valid yet beyond the leeway", func(s *tokenSpec) { s.nbf = testStart.Add(2 * leeway) }, 0, "invalid"},
		{"not valid yet within the leeway", func(s *tokenSpec) { s.nbf = testStart.Add(leeway / 2) }, 0, "ok"},
		{"issued in the future", func(s *tokenSpec) { s.iat, s.nbf = testStart.Add(2*leeway), time.Time{} }, 0, "invalid"},
		{"no expiry", func(s *tokenSpec) { s.exp = time.Time{} }, 0, "not-local"},
		{"bound to no pod", func(s *tokenSpec) { s.private.Pod, s.private.Node = nil, nil }, 0, "not-local"},
		{"bound to a node only", func(s *tokenSpec) { s.private.Pod = nil }, 0, "not-local"},
		{"bound to a secret", func(s *tokenSpec) {
			s.private.Pod, s.private.Node, s.private.Secret = nil, nil, &ref{Name: "s", UID: "u"}
		}, 0, "not-local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, key)
			spec := podToken()
			tc.edit(&spec)
			f.clock.Step(tc.advance)
			_, err := f.v.Verify(context.Background(), sign(t, key, spec), true)
			if got := outcome(err); got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

func TestVerifyBoundPod(t *testing.T) {
	key := newRSAKey(t, "k")
	past, future, recent := testStart.Add(-2*time.Minute), testStart.Add(30*time.Second), testStart.Add(-30*time.Second)
	for _, tc := range []struct {
		name string
		pods map[string]Pod
		edit func(*tokenSpec)
		want string
	}{
		{"held", map[string]Pod{"kube-system/kube-proxy-x": {UID: testPodUID}}, nil, "ok"},
		{"absent, node claim names this node", map[string]Pod{}, nil, "invalid"},
		{"absent, no node claim", map[string]Pod{}, func(s *tokenSpec) { s.private.Node = nil }, "not-local"},
		{"UID differs", map[string]Pod{"kube-system/kube-proxy-x": {UID: "other"}}, nil, "invalid"},
		{"deleted beyond the leeway", map[string]Pod{"kube-system/kube-proxy-x": {UID: testPodUID, DeletionTimestamp: &past}}, nil, "invalid"},
		{"deleted within the leeway", map[string]Pod{"kube-system/kube-proxy-x": {UID: testPodUID, DeletionTimestamp: &recent}}, nil, "ok"},
		{"terminating within its grace", map[string]Pod{"kube-system/kube-proxy-x": {UID: testPodUID, DeletionTimestamp: &future}}, nil, "ok"},
		{"bound to a pod on another node", map[string]Pod{}, func(s *tokenSpec) { s.private.Node = &ref{Name: "node-b", UID: "b"} }, "not-local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, key)
			f.v.cfg.Pods = pods(tc.pods)
			spec := podToken()
			if tc.edit != nil {
				tc.edit(&spec)
			}
			_, err := f.v.Verify(context.Background(), sign(t, key, spec), true)
			if got := outcome(err); got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
	t.Run("pods not synced", func(t *testing.T) {
		f := newFixture(t, key)
		f.v.cfg.Pods = func(string, string) (Pod, error) { return Pod{}, errors.New("not ready") }
		_, err := f.v.Verify(context.Background(), sign(t, key, podToken()), true)
		if got := outcome(err); got != "not-local" {
			t.Errorf("got %s (%v), want not-local", got, err)
		}
	})
}
