package forpods

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAuthorizedStartsAHolding(t *testing.T) {
	ns := listAll(slicesGVR)
	ns.Namespace = "kube-system"
	get := listAll(slicesGVR)
	get.Verb, get.Name = "get", "x"
	stranger := proxyPod
	stranger.UID = "uid-of-another-pod"
	for _, tc := range []struct {
		name     string
		pod      podT
		a        requestinfo.Attributes
		wantHeld bool
	}{
		{"cluster-wide list by a pod on the node", proxyPod, listAll(slicesGVR), true},
		{"a namespaced list", proxyPod, ns, false},
		{"a get", proxyPod, get, false},
		{"a pod not on the node", stranger, listAll(slicesGVR), false},
		{"a resource not in the list", proxyPod, listAll(podsGVR), false},
		{"a pod of a service account not allowed to own", tenantPod, listAll(slicesGVR), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 16, newMemStore(), proxyPod, tenantPod)
			r.start(t)
			eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
			r.m.Authorized(context.Background(), tc.pod, tc.a)
			held := r.caches[slicesGVR].Ready()
			if held != tc.wantHeld {
				t.Fatalf("got held %v on return, want %v", held, tc.wantHeld)
			}
			if !tc.wantHeld {
				if got := r.m.HeldFor(slicesGVR); len(got) != 0 {
					t.Errorf("got owners %v, want none", got)
				}
				return
			}
			if got := r.m.HeldFor(slicesGVR); !slices.Equal(got, []string{"kube-system/kube-proxy"}) {
				t.Errorf("got held for %v, want kube-system/kube-proxy", got)
			}
			if got := <-r.minted; got != proxyPod {
				t.Errorf("got a token minted for %+v, want the caller's pod", got)
			}
			if _, ok := r.store.meta[OwnersKey(r.m.byGVR[slicesGVR].Resource.Key())]; !ok {
				t.Errorf("got no stored owners, want them stored")
			}
		})
	}
}

func TestHoldingIsSharedAndCapped(t *testing.T) {
	r := newRig(t, 1, newMemStore(), proxyPod, dnsPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	r.m.Authorized(context.Background(), dnsPod, listAll(slicesGVR))
	if got := r.syncs.Load(); got != 1 {
		t.Errorf("got %d syncs for two readers, want 1", got)
	}
	if got := r.m.HeldFor(slicesGVR); !slices.Equal(got, []string{"kube-system/coredns", "kube-system/kube-proxy"}) {
		t.Errorf("got held for %v, want both service accounts", got)
	}
	r.m.Authorized(context.Background(), dnsPod, listAll(nsGVR))
	if r.caches[nsGVR].Ready() {
		t.Errorf("got namespaces held beyond the cap of 1, want them the cloud's")
	}
	want := `
# HELP apiserver_lite_pod_held_resources Resources held now for pods on this node on their own identities.
# TYPE apiserver_lite_pod_held_resources gauge
apiserver_lite_pod_held_resources 1
# HELP apiserver_lite_pod_holdings_refused_total Times a resource was not held for pods because pod-identity-max-resources were held already; its reads stayed the cloud's.
# TYPE apiserver_lite_pod_holdings_refused_total counter
apiserver_lite_pod_holdings_refused_total{resource="/v1/namespaces?forPods=true"} 1
`
	if err := testutil.CollectAndCompare(r.m.Collector(), strings.NewReader(want),
		"apiserver_lite_pod_held_resources", "apiserver_lite_pod_holdings_refused_total"); err != nil {
		t.Error(err)
	}
}

// Only the request that starts a holding waits for its first list, and
// no longer than firstListWait; the next is forwarded at once.
func TestOnlyTheStartingRequestWaits(t *testing.T) {
	r := newRig(t, 16, newMemStore(), proxyPod, dnsPod)
	r.stuck = true
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	returned := make(chan struct{})
	go func() {
		r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
		close(returned)
	}()
	eventually(t, "the first request to wait", func() bool { return r.syncs.Load() == 1 && r.clock.HasWaiters() })
	r.m.Authorized(context.Background(), dnsPod, listAll(slicesGVR)) // returns without the clock moving
	select {
	case <-returned:
		t.Fatal("got the starting request answered before its wait was over, want it waiting")
	default:
	}
	eventually(t, "the starting request to give up", func() bool {
		r.clock.Step(firstListWait)
		select {
		case <-returned:
			return true
		default:
			return false
		}
	})
}

// A tenant that reads first neither starts the holding nor becomes its
// sync identity; an allowed component that reads later does both, and
// the tenant's reads are then served from it.
func TestTenantReadingFirstIsNeverTheSyncIdentity(t *testing.T) {
	r := newRig(t, 16, newMemStore(), proxyPod, tenantPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	r.m.Authorized(context.Background(), tenantPod, listAll(slicesGVR))
	if r.syncs.Load() != 0 || r.caches[slicesGVR].Ready() {
		t.Fatalf("got %d syncs after a tenant's read, want none", r.syncs.Load())
	}
	r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	if got := <-r.minted; got != proxyPod {
		t.Fatalf("got a token minted for %+v, want kube-proxy's pod", got)
	}
	r.m.Authorized(context.Background(), tenantPod, listAll(slicesGVR))
	if got := r.m.HeldFor(slicesGVR); !slices.Equal(got, []string{"kube-system/kube-proxy"}) {
		t.Errorf("got held for %v, want kube-system/kube-proxy only", got)
	}
}

// Stored owners whose service account is no longer allowed are not
// loaded: a holding an earlier configuration let a tenant own is dropped.
func TestStoredOwnersNotAllowedAreIgnored(t *testing.T) {
	store := newMemStore()
	key := cloudsync.Resource{GVR: slicesGVR, ForPods: true}.Key()
	store.meta[OwnersKey(key)] = []byte(`{"owners":[{"namespace":"tenant","name":"reader","uid":"uid-tenant","serviceAccount":"reader"}]}`)
	r := newRig(t, 16, store, tenantPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	if got := r.m.HeldFor(slicesGVR); len(got) != 0 || r.syncs.Load() != 0 {
		t.Errorf("got owners %v and %d syncs, want none", got, r.syncs.Load())
	}
}

// The node's own identity keeps its view of a resource held whole for
// pods beside its partial sync; a resource only pods' holdings have is
// asked about per request.
func TestForPodsLeavesTheNodesViewOfAWidenedResource(t *testing.T) {
	nodesGVR := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	m := New(Config{Resources: []Held{
		{Resource: cloudsync.Resource{GVR: nodesGVR, ForPods: true}, Widens: true},
		{Resource: cloudsync.Resource{GVR: slicesGVR, ForPods: true}}}})
	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		want bool
	}{{nodesGVR, false}, {slicesGVR, true}, {podsGVR, false}} {
		if got := m.ForPods(listAll(tc.gvr)); got != tc.want {
			t.Errorf("ForPods(%s): got %v, want %v", tc.gvr.Resource, got, tc.want)
		}
	}
}

// Report, the metrics and Current name the sync identity, and lose it
// once the cloud refuses the last owner.
func TestSyncIdentityIsVisible(t *testing.T) {
	r := newRig(t, 16, newMemStore(), proxyPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	got := r.m.Report()[1]
	if got.SyncIdentity != "kube-system/kube-proxy (pod kube-system/kube-proxy-a)" || got.Scope != ScopeCluster || !r.m.Current(slicesGVR) {
		t.Fatalf("got %+v, current %v; want it synced as kube-proxy, cluster-wide", got, r.m.Current(slicesGVR))
	}
	want := `
# HELP apiserver_lite_pod_holding_sync_identity 1 for the pod and service account whose token a held resource's sync runs on, with where it is held (scope: cluster).
# TYPE apiserver_lite_pod_holding_sync_identity gauge
apiserver_lite_pod_holding_sync_identity{pod="kube-system/kube-proxy-a",resource="discovery.k8s.io/v1/endpointslices?forPods=true",scope="cluster",service_account="kube-system/kube-proxy"} 1
`
	if err := testutil.CollectAndCompare(r.m.Collector(), strings.NewReader(want), "apiserver_lite_pod_holding_sync_identity"); err != nil {
		t.Error(err)
	}
	h := r.m.byGVR[slicesGVR]
	r.m.mu.Lock()
	token := h.identityToken
	r.m.mu.Unlock()
	r.m.refused(h, token, 403)
	if got := r.m.Report()[1]; got.SyncIdentity != "" || r.m.Current(slicesGVR) {
		t.Errorf("got %+v, current %v after the refusal; want no identity, not current", got, r.m.Current(slicesGVR))
	}
}
