package offline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDecisionsStoredOnlyForHeldResources(t *testing.T) {
	held := func(a requestinfo.Attributes) bool { return a.ResourceRequest && a.Resource == "configmaps" }
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cm := requestinfo.Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "a", Name: "c"}
	with := func(f func(*requestinfo.Attributes)) requestinfo.Attributes { a := cm; f(&a); return a }
	for _, tc := range []struct {
		name    string
		a       requestinfo.Attributes
		allowed bool
		want    int
	}{
		{"allowed get of a held resource", cm, true, 1},
		{"allowed list of a held resource", with(func(a *requestinfo.Attributes) { a.Verb, a.Name = "list", "" }), true, 1},
		{"denied get", cm, false, 0},
		{"non-resource path", requestinfo.Attributes{Verb: "get", Path: "/apis/x.example.com"}, true, 0},
		{"forwarded-only resource", with(func(a *requestinfo.Attributes) { a.Resource = "persistentvolumeclaims" }), true, 0},
		{"subresource", with(func(a *requestinfo.Attributes) { a.Subresource = "status" }), true, 0},
		{"write", with(func(a *requestinfo.Attributes) { a.Verb = "update" }), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := NewMemoryStore()
			z := NewDecisions(DecisionsConfig{Store: store, Grace: time.Hour, Held: held})
			d := Decision{Allowed: tc.allowed, At: now}
			z.Remember(context.Background(), tenant, tc.a, d)
			if u, _ := store.MetaUsage(context.Background(), DecisionPrefix); u.Count != tc.want {
				t.Errorf("got %d stored, want %d", u.Count, tc.want)
			}
			if got, ok := z.Mem(DecisionKey(tenant, tc.a)); !ok || got.Allowed != tc.allowed {
				t.Errorf("in memory: got %+v, %v; want the decision", got, ok)
			}
		})
	}
}

func TestDecisionsQuotaPerIdentity(t *testing.T) {
	const quota = 5
	store := NewMemoryStore()
	z := NewDecisions(DecisionsConfig{Store: store, Grace: time.Hour, PerIdentity: quota,
		Held: func(requestinfo.Attributes) bool { return true }})
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	get := func(i int) requestinfo.Attributes {
		return requestinfo.Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "a",
			Name: fmt.Sprintf("c%d", i)}
	}
	bob := caller.User{Name: "bob"}
	for i := range 3 * quota {
		z.Remember(context.Background(), tenant, get(i), Decision{Allowed: true, At: now})
	}
	z.Remember(context.Background(), bob, get(0), Decision{Allowed: true, At: now})
	z.Remember(context.Background(), tenant, get(0), Decision{Allowed: true, At: now.Add(time.Minute)}) // a refresh
	for _, tc := range []struct {
		who  caller.User
		want int
	}{{tenant, quota}, {bob, 1}} {
		if u, _ := store.MetaUsage(context.Background(), DecisionPrefix+identityKey(tc.who)+"/"); u.Count != tc.want {
			t.Errorf("%s: got %d stored, want %d", tc.who.Name, u.Count, tc.want)
		}
	}
	fresh := NewDecisions(DecisionsConfig{Store: store, Grace: time.Hour})
	if d, ok := fresh.Stored(context.Background(), DecisionKey(tenant, get(0))); !ok || !d.At.Equal(now.Add(time.Minute)) {
		t.Errorf("refreshed decision: got %+v, %v; want the refresh stored at quota", d, ok)
	}
	rotated := tenant
	rotated.Extra = map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=new"}}
	z.Remember(context.Background(), rotated, get(100), Decision{Allowed: true, At: now.Add(2 * time.Minute)})
	if _, ok := fresh.Stored(context.Background(), DecisionKey(rotated, get(100))); ok {
		t.Error("a rotated token's new question was stored past its identity's quota")
	}
	later := now.Add(staleDecisionAge + 30*time.Second) // all but the refreshed one went stale
	z.Remember(context.Background(), rotated, get(101), Decision{Allowed: true, At: later})
	if _, ok := fresh.Stored(context.Background(), DecisionKey(rotated, get(101))); !ok {
		t.Error("a new question after an hour: not stored, want the stale decisions to make room")
	}
	if u, _ := store.MetaUsage(context.Background(), DecisionPrefix+identityKey(tenant)+"/"); u.Count != 2 {
		t.Errorf("after the eviction: got %d stored, want 2 (the refreshed one and the new one)", u.Count)
	}
}

func TestHeldResources(t *testing.T) {
	held := HeldResources([]cloudsync.Resource{
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		{GVR: schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}},
	})
	for _, tc := range []struct {
		name string
		a    requestinfo.Attributes
		want bool
	}{
		{"held core resource", requestinfo.Attributes{ResourceRequest: true, Verb: "list", Version: "v1", Resource: "configmaps"}, true},
		{"held group resource", requestinfo.Attributes{ResourceRequest: true, Verb: "watch", Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, true},
		{"other resource", requestinfo.Attributes{ResourceRequest: true, Verb: "get", Version: "v1", Resource: "secrets"}, false},
		{"API roots", requestinfo.Attributes{Verb: "get", Path: "/apis"}, true},
		{"version", requestinfo.Attributes{Verb: "get", Path: "/version/"}, true},
		{"core group-version", requestinfo.Attributes{Verb: "get", Path: "/api/v1"}, true},
		{"held group", requestinfo.Attributes{Verb: "get", Path: "/apis/discovery.k8s.io"}, true},
		{"held group-version", requestinfo.Attributes{Verb: "get", Path: "/apis/discovery.k8s.io/v1"}, true},
		{"group not held", requestinfo.Attributes{Verb: "get", Path: "/apis/x.example.com"}, false},
		{"other path", requestinfo.Attributes{Verb: "get", Path: "/metrics"}, false},
		{"not a read", requestinfo.Attributes{Verb: "post", Path: "/apis"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := held(tc.a); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// A decision taken before its resource came to be held (a pod's read that
// starts a holding) is stored once Retain is told, and the discovery the
// daemon serves is stored as Held says.
func TestDecisionsRetainedOnceHeld(t *testing.T) {
	var heldNow bool
	held := func(a requestinfo.Attributes) bool {
		return heldNow || (!a.ResourceRequest && a.Path == "/apis")
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	store := NewMemoryStore()
	z := NewDecisions(DecisionsConfig{Store: store, Grace: time.Hour, Held: held})
	widgets := requestinfo.Attributes{ResourceRequest: true, Verb: "list", Group: "e2e.example.com", Version: "v1",
		Resource: "widgets", Namespace: "op"}
	z.Remember(context.Background(), tenant, widgets, Decision{Allowed: true, At: now})
	z.Remember(context.Background(), tenant, requestinfo.Attributes{Verb: "get", Path: "/apis"}, Decision{Allowed: true, At: now})
	count := func() int {
		u, _ := store.MetaUsage(context.Background(), DecisionPrefix)
		return u.Count
	}
	if got := count(); got != 1 {
		t.Fatalf("before the holding: got %d stored, want the discovery's alone", got)
	}
	z.Retain(context.Background(), tenant, widgets)
	if got := count(); got != 1 {
		t.Fatalf("retained while not held: got %d stored, want 1", got)
	}
	heldNow = true
	z.Retain(context.Background(), tenant, widgets)
	if got := count(); got != 2 {
		t.Errorf("retained once held: got %d stored, want 2", got)
	}
	if d, ok := z.Stored(context.Background(), DecisionKey(tenant, widgets)); !ok || !d.Allowed {
		t.Errorf("stored decision: got %+v, %v, want the allowed one", d, ok)
	}
}
