package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	clocktesting "k8s.io/utils/clock/testing"
)

func podObj(t *testing.T, ns, name, uid, sa string, deleting bool) *versioncache.Object {
	t.Helper()
	del := ""
	if deleting {
		del = `,"deletionTimestamp":"2026-01-01T00:00:00Z"`
	}
	raw := `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"` + ns + `","name":"` + name + `","uid":"` + uid +
		`","resourceVersion":"5"` + del + `},"spec":{"nodeName":"edge-a","serviceAccountName":"` + sa + `"}}`
	o, err := versioncache.NewObject([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPodFinder(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []*versioncache.Object
		want Pod
		ok   bool
	}{
		{"none", nil, Pod{}, false},
		{"other account", []*versioncache.Object{podObj(t, "apiserver-lite-pool", "p", "u1", "default", false)}, Pod{}, false},
		{"other namespace", []*versioncache.Object{podObj(t, "kube-system", "p", "u1", "apiserver-lite-pool", false)}, Pod{}, false},
		{"being deleted", []*versioncache.Object{podObj(t, "apiserver-lite-pool", "p", "u1", "apiserver-lite-pool", true)}, Pod{}, false},
		{"found", []*versioncache.Object{
			podObj(t, "apiserver-lite-pool", "a", "u1", "apiserver-lite-pool", true),
			podObj(t, "apiserver-lite-pool", "b", "u2", "apiserver-lite-pool", false)},
			Pod{Namespace: "apiserver-lite-pool", Name: "b", UID: "u2", ServiceAccount: "apiserver-lite-pool"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := versioncache.New(versioncache.GVR{Version: "v1", Resource: "pods"}, 10)
			c.Replace(tc.pods, 5)
			got, ok := PodFinder(c, "apiserver-lite-pool", "apiserver-lite-pool")()
			if ok != tc.ok || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pod := Pod{Namespace: "apiserver-lite-pool", Name: "p", UID: "u1", ServiceAccount: "apiserver-lite-pool"}
	var minted []Pod
	mint := func(_ context.Context, p Pod) (string, time.Time, error) {
		minted = append(minted, p)
		return "tok", clk.Now().Add(time.Hour), nil
	}
	ts := Tokens(func() (Pod, bool) { return pod, true }, mint, clk)
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "tok" || len(minted) != 1 || minted[0] != pod {
		t.Errorf("token %q minted for %+v, want tok for %+v", tok.AccessToken, minted, pod)
	}
	if want := clk.Now().Add(48 * time.Minute); !tok.Expiry.Equal(want) {
		t.Errorf("renew at %v, want %v (80%% of an hour)", tok.Expiry, want)
	}

	none := Tokens(func() (Pod, bool) { return Pod{}, false }, mint, clk)
	if _, err := none.Token(); !errors.Is(err, ErrNoPoolPod) {
		t.Errorf("without a pool pod: err %v, want ErrNoPoolPod", err)
	}
}
