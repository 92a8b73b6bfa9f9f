package satoken

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	testingclock "k8s.io/utils/clock/testing"
)

const (
	testIssuer   = "https://kubernetes.default.svc.cluster.local"
	testAudience = "https://kubernetes.default.svc.cluster.local"
	testNode     = "node-a"
	testNodeUID  = "node-uid-a"
	testSAUID    = "sa-uid-1"
	testPodUID   = "pod-uid-1"
)

var testStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// signingKey is a private key with its kid and algorithm.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newRSAKey(t *testing.T, kid string) signingKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.RS256, priv: k}
}

func newECKey(t *testing.T, kid string) signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.ES256, priv: k}
}

// jwks publishes keys' public halves as the cloud's /openid/v1/jwks does.
func jwks(t *testing.T, keys ...signingKey) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
	}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// tokenSpec is what a test token claims.
type tokenSpec struct {
	issuer   string
	audience []string
	iat, exp time.Time
	nbf      time.Time
	jti      string
	private  kubernetesClaims
}

// podToken is a pod-bound token as kube-apiserver mints it for the
// kubelet on testNode, valid for an hour from testStart.
func podToken() tokenSpec {
	return tokenSpec{issuer: testIssuer, audience: []string{testAudience}, iat: testStart, nbf: testStart,
		exp: testStart.Add(time.Hour), jti: "jti-1", private: kubernetesClaims{
			Namespace: "kube-system", Svcacct: ref{Name: "kube-proxy", UID: testSAUID},
			Pod:  &ref{Name: "kube-proxy-x", UID: testPodUID},
			Node: &ref{Name: testNode, UID: testNodeUID}}}
}

// sign serialises spec signed by k, with kube's claim layout.
func sign(t *testing.T, k signingKey, spec tokenSpec) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.kid))
	if err != nil {
		t.Fatal(err)
	}
	pub := jwt.Claims{Issuer: spec.issuer, Subject: "system:serviceaccount:" + spec.private.Namespace + ":" + spec.private.Svcacct.Name,
		Audience: jwt.Audience(spec.audience), ID: spec.jti}
	if !spec.iat.IsZero() {
		pub.IssuedAt = jwt.NewNumericDate(spec.iat)
	}
	if !spec.nbf.IsZero() {
		pub.NotBefore = jwt.NewNumericDate(spec.nbf)
	}
	if !spec.exp.IsZero() {
		pub.Expiry = jwt.NewNumericDate(spec.exp)
	}
	tok, err := jwt.Signed(signer).Claims(privateClaims{Kubernetes: spec.private}).Claims(pub).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// fakeCloud publishes keys and counts reads (the network edge).
type fakeCloud struct {
	mu    sync.Mutex
	jwks  []byte
	reads int
}

func (c *fakeCloud) fetch(context.Context) (Published, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return Published{Issuer: testIssuer, JWKS: c.jwks}, nil
}

func (c *fakeCloud) publish(raw []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jwks = raw
}

func (c *fakeCloud) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// memStore is an in-memory Store.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *memStore) Put(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = value
	return nil
}

// pods is a PodGetter over a map of namespace/name.
func pods(m map[string]Pod) PodGetter {
	return func(ns, name string) (Pod, error) {
		p, ok := m[ns+"/"+name]
		if !ok {
			return Pod{}, ErrPodNotFound
		}
		return p, nil
	}
}

// fixture is a verifier that knows the test audience and the kube-proxy
// ServiceAccount and holds the kube-proxy pod, with keys from cloud.
type fixture struct {
	v     *Verifier
	cloud *fakeCloud
	clock *testingclock.FakeClock
	store *memStore
}

func newFixture(t *testing.T, keys ...signingKey) fixture {
	t.Helper()
	f := fixture{cloud: &fakeCloud{jwks: jwks(t, keys...)}, clock: testingclock.NewFakeClock(testStart), store: &memStore{}}
	f.v = New(Config{NodeName: testNode, Audiences: []string{testAudience}, Fetch: f.cloud.fetch,
		Pods: pods(map[string]Pod{"kube-system/kube-proxy-x": {UID: testPodUID}}), Store: f.store, Clock: f.clock})
	f.v.Learn(context.Background(), "system:serviceaccount:kube-system:kube-proxy", testSAUID, nil)
	return f
}
