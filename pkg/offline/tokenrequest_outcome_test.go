package offline

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeJWT is an unsigned token whose payload carries exp.
func fakeJWT(exp time.Time) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"exp":` + itoa(uint64(exp.Unix())) + `}`))
	return "eyJhbGciOiJSUzI1NiJ9." + payload + ".sig"
}

// fakeCloud answers TokenRequests 201 with a token valid for jwtLife
// while up is set, else 503 as the proxy does.
type fakeCloud struct {
	now     time.Time
	jwtLife time.Duration
	up      bool
	calls   int
	minted  int
}

func (c *fakeCloud) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c.calls++
	if !c.up {
		http.Error(w, "cloud unreachable", http.StatusServiceUnavailable)
		return
	}
	c.minted++
	resp := authenticationv1.TokenRequest{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
		Status: authenticationv1.TokenRequestStatus{Token: fakeJWT(c.now.Add(c.jwtLife)) + itoa(uint64(c.minted)),
			ExpirationTimestamp: metav1.NewTime(c.now.Add(time.Hour))}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

func post(h http.Handler, body string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tokenURL, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

func yes(*http.Request) bool { return true }

func TestStoredByOutcomeNotByProber(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cloud := &fakeCloud{now: now, jwtLife: time.Hour, up: true}
	store := NewMemoryStore()
	proberSaysUp := false // the cloud is back, the prober has not noticed
	h := WrapTokenRequests(cloud, TokenRequestConfig{Store: store, Connected: func() bool { return proberSaysUp },
		Clock: clocktesting.NewFakePassiveClock(now), FromNode: yes, HeldPod: func(_, _, _ string) bool { return true }})
	code, first := post(h, requestBody("api"))
	if code != http.StatusCreated || len(store.m) != 1 {
		t.Fatalf("link down, cloud up: got %d and %d stored, want 201 and 1 stored", code, len(store.m))
	}
	cloud.up, proberSaysUp = false, true // the cloud left, the prober has not noticed
	code, again := post(h, requestBody("api"))
	if code != http.StatusCreated || again != first {
		t.Fatalf("link up, cloud down: got %d %s, want 201 with the stored answer", code, again)
	}
	if cloud.calls != 2 {
		t.Fatalf("got %d forwards, want 2: a link that looks up is tried first", cloud.calls)
	}
}

func TestStoresOnlyTheNodesOwnPodTokens(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	unbound := func() string {
		tr := authenticationv1.TokenRequest{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
			Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"sts.amazonaws.com"}}}
		b, _ := json.Marshal(tr)
		return string(b)
	}()
	for _, tc := range []struct {
		name      string
		fromNode  bool
		held      bool
		body      string
		wantStore int
	}{
		{"node, held pod", true, true, requestBody("api"), 1},
		{"tenant, held pod", false, true, requestBody("api"), 0},
		{"node, pod not held", true, false, requestBody("api"), 0},
		{"node, no bound object", true, true, unbound, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := NewMemoryStore()
			var gotPod []string
			h := WrapTokenRequests(&fakeCloud{now: now, jwtLife: time.Hour, up: true}, TokenRequestConfig{Store: store, Connected: func() bool { return true },
				Clock:    clocktesting.NewFakePassiveClock(now),
				FromNode: func(*http.Request) bool { return tc.fromNode },
				HeldPod: func(ns, name, uid string) bool {
					gotPod = []string{ns, name, uid}
					return tc.held
				}})
			if code, _ := post(h, tc.body); code != http.StatusCreated {
				t.Fatalf("got %d, want 201", code)
			}
			if len(store.m) != tc.wantStore {
				t.Fatalf("got %d stored, want %d", len(store.m), tc.wantStore)
			}
			if tc.fromNode && tc.body != unbound && strings.Join(gotPod, "/") != "ns/p/uid-1" {
				t.Fatalf("asked for pod %v, want ns/p/uid-1", gotPod)
			}
			for k := range store.m {
				if !strings.HasPrefix(k, PodPrefix("uid-1")) {
					t.Fatalf("stored under %s, want under the pod's UID", k)
				}
			}
		})
	}
}

func TestExpiryIsTheLaterOfStatusAndJWT(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		jwtLife time.Duration
		want    time.Duration
	}{
		{"extended JWT", 365 * 24 * time.Hour, 365 * 24 * time.Hour},
		{"JWT shorter than status", time.Minute, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := NewMemoryStore()
			h := WrapTokenRequests(&fakeCloud{now: now, jwtLife: tc.jwtLife, up: true}, TokenRequestConfig{Store: store, Connected: func() bool { return true },
				Clock: clocktesting.NewFakePassiveClock(now), FromNode: yes, HeldPod: func(_, _, _ string) bool { return true }})
			post(h, requestBody("api"))
			for _, raw := range store.m {
				var e entry
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				if !e.Expires.Equal(now.Add(tc.want)) {
					t.Fatalf("got expiry %s, want %s", e.Expires, now.Add(tc.want))
				}
				return
			}
			t.Fatal("nothing stored")
		})
	}
}

func TestJWTExpiry(t *testing.T) {
	exp := time.Unix(1800000000, 0)
	for _, tc := range []struct {
		name   string
		token  string
		wantOK bool
	}{
		{"exp", fakeJWT(exp), true},
		{"padded", strings.Replace(fakeJWT(exp), ".sig", "", 1) + "==.sig", true},
		{"two parts", "a.b", false},
		{"not base64", "a.!!!.c", false},
		{"no exp", "a." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"x"}`)) + ".c", false},
		{"string exp", "a." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":"soon"}`)) + ".c", false},
		{"negative exp", "a." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":-5}`)) + ".c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := jwtExpiry(tc.token)
			if ok != tc.wantOK || (ok && !got.Equal(exp)) {
				t.Fatalf("got %s, %v, want %s, %v", got, ok, exp, tc.wantOK)
			}
		})
	}
}

func FuzzJWTExpiry(f *testing.F) {
	f.Add(fakeJWT(time.Unix(1800000000, 0)))
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, token string) {
		if exp, ok := jwtExpiry(token); ok && exp.Unix() <= 0 {
			t.Fatalf("got non-positive expiry %s", exp)
		}
	})
}
