package forpods

import (
	"context"
	"slices"
	"testing"
)

// The last owner leaving drops the holding after the grace, and only
// then; another owner keeps it.
func TestDepartureDropsAfterGrace(t *testing.T) {
	r := newRig(t, 16, newMemStore(), proxyPod, dnsPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	r.m.Authorized(context.Background(), dnsPod, listAll(slicesGVR))
	key := r.m.byGVR[slicesGVR].Resource.Key()

	r.deletePod(t, proxyPod)
	eventually(t, "the proxy pod to leave", func() bool {
		return slices.Equal(r.m.HeldFor(slicesGVR), []string{"kube-system/coredns"})
	})
	r.deletePod(t, dnsPod)
	eventually(t, "the last owner to leave", func() bool { return len(r.m.HeldFor(slicesGVR)) == 0 })
	r.clock.Step(dropGrace / 2)
	r.m.reconcile(context.Background())
	if !r.caches[slicesGVR].Ready() {
		t.Fatalf("got the holding dropped within its grace, want it kept")
	}
	if got := r.m.Report()[1]; got.Resource != key || got.Held {
		t.Fatalf("got %+v within the grace, want %s's sync stopped", got, key)
	}
	r.clock.Step(dropGrace)
	eventually(t, "the drop", func() bool { return !r.caches[slicesGVR].Ready() })
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	if !slices.Equal(r.store.dropped, []string{key}) || r.store.scrubs == 0 {
		t.Errorf("got dropped %v with %d scrubs, want %s dropped and scrubbed", r.store.dropped, r.store.scrubs, key)
	}
	if _, ok := r.store.meta[OwnersKey(key)]; ok {
		t.Errorf("got owners still stored, want them deleted")
	}
}

// A restart resumes a stored holding without a reader, and drops stored
// state whose owners are gone.
func TestRestartResumesStoredHoldings(t *testing.T) {
	store := newMemStore()
	first := newRig(t, 16, store, proxyPod)
	first.start(t)
	eventually(t, "Run to start", func() bool { first.m.mu.Lock(); defer first.m.mu.Unlock(); return first.m.runCtx != nil })
	first.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	first.m.Authorized(context.Background(), proxyPod, listAll(nsGVR))
	first.stop()

	second := newRig(t, 16, store, proxyPod) // same pod still on the node
	second.start(t)
	eventually(t, "the stored holdings to resume", func() bool {
		return second.caches[slicesGVR].Ready() && second.caches[nsGVR].Ready()
	})

	third := newRig(t, 16, store)             // the pod left while the daemon was down
	third.caches[slicesGVR].Replace(nil, 100) // restored from the store
	third.start(t)
	eventually(t, "the orphaned state to be dropped", func() bool {
		third.clock.Step(dropGrace)
		store.mu.Lock()
		defer store.mu.Unlock()
		return slices.Contains(store.dropped, third.m.byGVR[slicesGVR].Resource.Key())
	})
	if third.syncs.Load() != 0 {
		t.Errorf("got %d syncs without an owner on the node, want 0", third.syncs.Load())
	}
}

// A new owner within the grace resumes the holding; nothing is dropped.
func TestNewOwnerWithinGraceResumes(t *testing.T) {
	r := newRig(t, 16, newMemStore(), proxyPod, dnsPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	r.deletePod(t, proxyPod)
	eventually(t, "the sync to stop", func() bool { return !r.m.Report()[1].Held })
	r.m.Authorized(context.Background(), dnsPod, listAll(slicesGVR))
	eventually(t, "a second sync", func() bool { return r.syncs.Load() == 2 })
	r.clock.Step(2 * dropGrace)
	r.m.reconcile(context.Background())
	if got := r.syncs.Load(); got != 2 || !r.m.Report()[1].Held || !r.caches[slicesGVR].Ready() {
		t.Errorf("got %d syncs, report %+v, want the holding resumed by a second sync", got, r.m.Report()[1])
	}
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	if len(r.store.dropped) != 0 {
		t.Errorf("got %v dropped, want nothing", r.store.dropped)
	}
}

// When the sync identity's pod leaves and another owner stays, the sync
// restarts at once on the other's token.
func TestIdentityLeavingFailsOverAtOnce(t *testing.T) {
	r := newRig(t, 16, newMemStore(), proxyPod, dnsPod)
	r.start(t)
	eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
	r.m.Authorized(context.Background(), dnsPod, listAll(slicesGVR)) // CoreDNS's token first
	r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
	if got := <-r.minted; got != dnsPod {
		t.Fatalf("got a token minted for %+v first, want CoreDNS's", got)
	}
	r.deletePod(t, dnsPod)
	eventually(t, "a sync on kube-proxy's token", func() bool {
		got := r.m.Report()[1].SyncIdentity
		return got == "kube-system/kube-proxy (pod kube-system/kube-proxy-a)" && r.syncs.Load() == 2
	})
	if !r.m.Current(slicesGVR) {
		t.Error("got the holding not current after the failover, want it current")
	}
}
