package forpods

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"golang.org/x/oauth2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

var saGR = schema.GroupResource{Resource: "serviceaccounts"}

// owned is a rig whose slices holding is owned by kube-proxy's and
// CoreDNS's pods (CoreDNS's UID sorts first), not running.
func owned(t *testing.T, mintErr func(door.Pod) error) (*rig, *holding, *syncTokens) {
	r := newRig(t, 16, newMemStore(), proxyPod, dnsPod)
	r.mintErr = mintErr
	h := r.m.byGVR[slicesGVR]
	for _, p := range []door.Pod{proxyPod, dnsPod} {
		r.m.own(context.Background(), h, p)
	}
	ts := &syncTokens{ResettableTokenSource: transport.NewCachedTokenSource(&podTokens{m: r.m, h: h}), m: r.m, h: h}
	return r, h, ts
}

// A mint the cloud refuses with a 4xx drops that owner and mints for the
// next; a mint that fails for the cloud's own trouble keeps every owner.
func TestMintFailsOverToTheNextOwner(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantOwners []string
		wantPod    string // "" for no token
	}{
		{"service account deleted (404)", apierrors.NewNotFound(saGR, "coredns"), []string{"kube-system/kube-proxy"}, proxyPod.UID},
		{"no API audience volume (403)", apierrors.NewForbidden(saGR, "coredns", errors.New(`audience "" not found in pod spec volume`)),
			[]string{"kube-system/kube-proxy"}, proxyPod.UID},
		{"bad request (400)", apierrors.NewBadRequest("pod gone"), []string{"kube-system/kube-proxy"}, proxyPod.UID},
		{"too many requests (429)", apierrors.NewTooManyRequests("later", 1), []string{"kube-system/coredns", "kube-system/kube-proxy"}, ""},
		{"cloud error (500)", apierrors.NewInternalError(errors.New("etcd")), []string{"kube-system/coredns", "kube-system/kube-proxy"}, ""},
		{"transport error", errors.New("connection refused"), []string{"kube-system/coredns", "kube-system/kube-proxy"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, h, ts := owned(t, func(p door.Pod) error {
				if p == dnsPod {
					return tc.err
				}
				return nil
			})
			tok, err := ts.Token()
			if got := r.m.HeldFor(slicesGVR); !slices.Equal(got, tc.wantOwners) {
				t.Errorf("got owners %v, want %v", got, tc.wantOwners)
			}
			if tc.wantPod == "" {
				if err == nil {
					t.Fatalf("got token %q, want the error", tok.AccessToken)
				}
				return
			}
			if err != nil || tok.AccessToken != "token-of-"+tc.wantPod || h.identity.UID != tc.wantPod {
				t.Fatalf("got token %v, identity %q, %v; want one of %s", tok, h.identity.UID, err, tc.wantPod)
			}
		})
	}
}

// A 401 or 403 to the sync on the identity's token drops that owner and
// the next token is minted for the next; a refusal of an older token
// changes nothing. With no owner left, nothing is minted.
func TestSyncRefusalFailsOver(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			r, _, ts := owned(t, nil)
			first, err := ts.Token()
			if err != nil || first.AccessToken != "token-of-"+dnsPod.UID {
				t.Fatalf("got %v, %v, want CoreDNS's token first", first, err)
			}
			ts.Refused("an-older-token", code)
			if got := r.m.HeldFor(slicesGVR); len(got) != 2 {
				t.Fatalf("got owners %v after an older token's refusal, want both", got)
			}
			ts.Refused(first.AccessToken, code)
			r.m.own(context.Background(), r.m.byGVR[slicesGVR], dnsPod) // it reads again
			if got := r.m.HeldFor(slicesGVR); !slices.Equal(got, []string{"kube-system/kube-proxy"}) {
				t.Fatalf("got owners %v after CoreDNS's refusal and new read, want kube-proxy alone", got)
			}
			next, err := ts.Token()
			if err != nil || next.AccessToken != "token-of-"+proxyPod.UID {
				t.Fatalf("got %v, %v, want kube-proxy's token after CoreDNS's was refused", next, err)
			}
			ts.Refused(next.AccessToken, code)
			if _, err := ts.Token(); !errors.Is(err, errNoOwner) {
				t.Fatalf("got %v with every owner refused, want errNoOwner", err)
			}
		})
	}
}

// The sync's transport tells the token source of the cloud's 401 and 403
// to a request on one of its tokens.
func TestRefusalWatchSeesTheCloudsAnswer(t *testing.T) {
	codes := []int{http.StatusOK, http.StatusForbidden, http.StatusUnauthorized}
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(codes[0])
	}))
	defer cloud.Close()
	src := &recordingSource{}
	cfg := TokenConfig(&rest.Config{Host: cloud.URL}, nil, src)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for len(codes) > 0 {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, cloud.URL+"/api/v1/nodes", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = codes[1:]
	}
	got = src.refused
	if !slices.Equal(got, []int{http.StatusForbidden, http.StatusUnauthorized}) || src.token != "t1" {
		t.Errorf("got refusals %v of %q, want 403 and 401 of t1", got, src.token)
	}
}

// recordingSource hands out t1 and records refusals.
type recordingSource struct {
	refused []int
	token   string
}

func (s *recordingSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: "t1", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}
func (s *recordingSource) ResetTokenOlderThan(time.Time) {}
func (s *recordingSource) Refused(token string, code int) {
	s.refused = append(s.refused, code)
	s.token = token
}
