package offline

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const tokenURL = "/api/v1/namespaces/ns/serviceaccounts/default/token"

func requestBody(audience string) string {
	exp := int64(3600)
	tr := authenticationv1.TokenRequest{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{audience}, ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "uid-1"}}}
	b, _ := json.Marshal(tr)
	return string(b)
}

func TestTokenRequestsAnsweredOffline(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	online := true
	calls := 0
	cloud := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if !online {
			http.Error(w, "cloud unreachable", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(b), `"audiences":["`) {
			t.Errorf("forwarded body lost its content: %s", b)
		}
		if strings.Contains(string(b), "forbidden-audience") {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		resp := authenticationv1.TokenRequest{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
			Status: authenticationv1.TokenRequestStatus{Token: "tok-" + time.Now().String(), ExpirationTimestamp: metav1.NewTime(now.Add(time.Hour))}}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(resp)
	})
	store := NewMemoryStore()
	h := WrapTokenRequests(cloud, TokenRequestConfig{Store: store, Connected: func() bool { return online }, Clock: clk,
		FromNode: func(*http.Request) bool { return true }, HeldPod: func(_, _, _ string) bool { return true }})
	post := func(body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tokenURL, strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}

	code, onlineBody := post(requestBody("api"))
	if code != http.StatusCreated {
		t.Fatalf("online: got %d, want 201", code)
	}
	if code, _ := post(requestBody("forbidden-audience")); code != http.StatusForbidden {
		t.Fatalf("online refused: got %d, want 403", code)
	}
	if len(store.m) != 1 {
		t.Fatalf("stored %d answers, want 1 (the refused one is not stored)", len(store.m))
	}

	online = false
	steps := []struct {
		name      string
		body      string
		advance   time.Duration
		wantCode  int
		wantCloud bool
	}{
		{"same request offline", requestBody("api"), 0, http.StatusCreated, false},
		{"other audience offline", requestBody("other"), 0, http.StatusServiceUnavailable, true},
		{"refused request offline", requestBody("forbidden-audience"), 0, http.StatusServiceUnavailable, true},
		{"same request after expiry", requestBody("api"), time.Hour, http.StatusServiceUnavailable, true},
	}
	for _, st := range steps {
		clk.SetTime(clk.Now().Add(st.advance))
		before := calls
		code, body := post(st.body)
		if code != st.wantCode {
			t.Errorf("%s: got %d, want %d", st.name, code, st.wantCode)
		}
		if gotCloud := calls > before; gotCloud != st.wantCloud {
			t.Errorf("%s: reached the wrapped handler %v, want %v", st.name, gotCloud, st.wantCloud)
		}
		if st.wantCode == http.StatusCreated && body != onlineBody {
			t.Errorf("%s: got body %s, want the stored answer %s", st.name, body, onlineBody)
		}
	}
}

func TestOtherRequestsPassThrough(t *testing.T) {
	calls := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ })
	h := WrapTokenRequests(next, TokenRequestConfig{Store: NewMemoryStore(), Connected: func() bool { return false }})
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, tokenURL, nil),
		httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/ns/pods", strings.NewReader("{}")),
		httptest.NewRequest(http.MethodPost, tokenURL, strings.NewReader("not a token request")),
	} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	if calls != 3 {
		t.Errorf("got %d requests through, want 3", calls)
	}
}
