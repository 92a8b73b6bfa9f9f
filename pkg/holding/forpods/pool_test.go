package forpods

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// testElector is a member of pool p that has not run its election.
func testElector(t *testing.T) *pool.Elector {
	t.Helper()
	e, err := pool.New(pool.Config{Pool: "p", Namespace: "apiserver-lite-pool", Self: pool.Holder{Node: "n1", Address: "10.0.0.1:10552"},
		Leases: fake.NewClientset().CoordinationV1(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The pool's tokens are the node's TokenRequests for its own pods, bound
// to the pod asked for.
func TestPoolMember(t *testing.T) {
	var got authenticationv1.TokenRequest
	var path string
	cloud := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		raw, _ := io.ReadAll(r.Body)
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, &got); err != nil {
			t.Errorf("decode the TokenRequest: %v", err)
		}
		got.Status.Token = "minted"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&got)
	}))
	t.Cleanup(cloud.Close)
	m := PoolMember(pool.MemberConfig{Pool: "p", Audience: "pool-aud"}, &rest.Config{Host: cloud.URL}, nil)
	if m.Pool != "p" || m.Audience != "pool-aud" || m.Cloud.Host != cloud.URL {
		t.Errorf("got pool %q audience %q cloud %q, want the settings kept and the node's cloud", m.Pool, m.Audience, m.Cloud.Host)
	}
	mint, err := m.MintFor([]string{"pool-aud"})
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := mint(context.Background(), pool.Pod{Namespace: "ns", Name: "pod-a", UID: "u1", ServiceAccount: "sa"})
	for _, tc := range []struct{ what, got, want string }{
		{"token", tok, "minted"},
		{"path", path, "/api/v1/namespaces/ns/serviceaccounts/sa/token"},
		{"bound pod", got.Spec.BoundObjectRef.Name + "/" + string(got.Spec.BoundObjectRef.UID), "pod-a/u1"},
		{"audiences", strings.Join(got.Spec.Audiences, ","), "pool-aud"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if err != nil || tc.got != tc.want {
				t.Errorf("got %q (%v), want %q", tc.got, err, tc.want)
			}
		})
	}
	if c := m.TokenConfig(nil); c.Host != cloud.URL || c.BearerToken != "" {
		t.Errorf("TokenConfig: got host %q token %q, want the cloud's address without the node's credentials", c.Host, c.BearerToken)
	}
}

// In a pool the holdings for pods read from the leader and count their
// cloud bytes; without one their sync is left alone.
func TestInPool(t *testing.T) {
	stats := pool.NewStats()
	f := pool.NewFollower(pool.FollowerConfig{Elector: testElector(t), Stats: stats, Logger: slog.New(slog.DiscardHandler)})
	r := cloudsync.Resource{GVR: slicesGVR, ForPods: true}
	for _, tc := range []struct {
		name      string
		f         *pool.Follower
		wantBytes int64
	}{
		{"no pool", nil, 0},
		{"a member", f, int64(len("hello"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := SyncDeps{}.InPool(tc.f, stats)
			if (d.Pool != nil) != (tc.f != nil) || (d.Wrap != nil) != (tc.f != nil) {
				t.Fatalf("got Pool %v Wrap %v, want them set %v", d.Pool != nil, d.Wrap != nil, tc.f != nil)
			}
			if d.Wrap == nil {
				return
			}
			// With no leader yet the holding lists from the cloud, which
			// names the resource's upstream in stats.
			cloud := &cache.ListWatch{ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return &metav1.List{}, nil
			}}
			if _, err := d.Pool(r, cloud, func() (door.Pod, bool) { return door.Pod{}, false }).ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
				t.Fatalf("list through the pool's upstream: %v", err)
			}
			resp, err := d.Wrap(r)(bodyTransport("hello")).RoundTrip(httptest.NewRequest(http.MethodGet, "/", nil))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := stats.Snapshot()[r.Key()].Bytes[pool.UpstreamCloud]; got != tc.wantBytes {
				t.Errorf("cloud bytes: got %d, want %d", got, tc.wantBytes)
			}
		})
	}
}

// bodyTransport answers every request with body.
type bodyTransport string

func (b bodyTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(string(b))), Header: http.Header{}}, nil
}

// The pool door serves what the node holds whole, only while it leads.
func TestPoolDoor(t *testing.T) {
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	res := []cloudsync.Resource{{GVR: services}, {GVR: podsGVR, FieldSelector: "spec.nodeName=n1"}}
	if got := PoolDoor(nil, res, nil); got.Serves != nil || got.Leading != nil {
		t.Errorf("no pool: got %+v, want no pool door", got)
	}
	got := PoolDoor(testElector(t), res, nil)
	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		want bool
	}{{services, true}, {podsGVR, false}, {slicesGVR, false}} {
		t.Run(tc.gvr.Resource, func(t *testing.T) {
			if s := got.Serves(tc.gvr); s != tc.want {
				t.Errorf("Serves: got %v, want %v", s, tc.want)
			}
		})
	}
	if leading, _ := got.Leading(); leading {
		t.Errorf("Leading before the election ran: got true, want false")
	}
}
