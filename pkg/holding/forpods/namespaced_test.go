package forpods

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A holding starts only for an authorized list or watch of one
// collection, in the caller's own namespace, by a pod on this node; secrets
// only when pod-identity-resources lists them.
func TestNamespacedStartsOnlyForItsNamespacesPods(t *testing.T) {
	absent := door.Pod{Namespace: "app", Name: "gone", UID: "uid-gone", ServiceAccount: "operator"}
	get := listIn(cmGVR, "app")
	get.Verb, get.Name = "get", "one"
	named := listIn(cmGVR, "app")
	named.Name = "one"
	watch := listIn(widgetGVR, "app")
	watch.Verb = "watch"
	status := listIn(widgetGVR, "app")
	status.Subresource = "status"
	for _, tc := range []struct {
		name    string
		pod     door.Pod
		a       requestinfo.Attributes
		secrets bool
		want    bool
	}{
		{"configmaps listed in its namespace", opPod, listIn(cmGVR, "app"), false, true},
		{"custom resources watched in its namespace", opPod, watch, false, true},
		{"another namespace's pod", otherPod, listIn(cmGVR, "app"), false, false},
		{"a pod not on this node", absent, listIn(cmGVR, "app"), false, false},
		{"cluster-wide list", opPod, listAll(cmGVR), false, false},
		{"a get", opPod, get, false, false},
		{"a list of one name", opPod, named, false, false},
		{"a subresource", opPod, status, false, false},
		{"secrets not listed", opPod, listIn(secretsGVR, "app"), false, false},
		{"secrets listed", opPod, listIn(secretsGVR, "app"), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newNSRig(t, noCaps, tc.secrets, opPod, otherPod)
			r.start(t)
			r.m.Authorized(context.Background(), tc.pod, tc.a)
			gvr := schema.GroupVersionResource{Group: tc.a.Group, Version: tc.a.Version, Resource: tc.a.Resource}
			if got := r.held(gvr, "app"); got != tc.want {
				t.Errorf("got held %v, want %v (report %+v)", got, tc.want, r.m.Report())
			}
		})
	}
}

// A resource the local API serves whole already is not held again.
func TestNamespacedSkipsCovered(t *testing.T) {
	r := newNSRig(t, noCaps, false, opPod)
	r.m.cfg.Covered = func(gvr schema.GroupVersionResource, ns string) bool { return gvr == cmGVR }
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(cmGVR, "app"))
	r.m.Authorized(context.Background(), opPod, listIn(widgetGVR, "app"))
	if r.held(cmGVR, "app") || !r.held(widgetGVR, "app") {
		t.Errorf("got %+v, want widgets held and configmaps left to the local API", r.m.Report())
	}
}

// Only a caller authorized per request reads a synced holding; the node's
// own identity, other namespaces and other resources keep today's path.
func TestNamespacedRoute(t *testing.T) {
	r := newNSRig(t, noCaps, false, opPod)
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(widgetGVR, "app"))
	eventually(t, "the first list", func() bool { return r.held(widgetGVR, "app") })
	for _, tc := range []struct{ path, caller, want string }{
		{"/apis/example.com/v1/namespaces/app/widgets", "pod", "holding"},
		{"/apis/example.com/v1/namespaces/app/widgets/w1", "pod", "holding"},
		{"/apis/example.com/v1/namespaces/app/widgets", "node", "main"},
		{"/apis/example.com/v1/namespaces/other/widgets", "pod", "main"},
		{"/apis/example.com/v1/widgets", "pod", "main"},
		{"/api/v1/namespaces/app/configmaps", "pod", "main"},
	} {
		if got := routed(r.m, tc.path, tc.caller); got != tc.want {
			t.Errorf("%s by %s: got %q, want %q", tc.path, tc.caller, got, tc.want)
		}
	}
}

// A custom resource whose definition is deleted ends its sync as gone:
// reads go back to the cloud at once, no request restarts it for a while,
// and its data is dropped and scrubbed after the grace.
func TestNamespacedGoneStops(t *testing.T) {
	r := newNSRig(t, noCaps, false, opPod)
	r.objects["app"] = 3
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(widgetGVR, "app"))
	eventually(t, "the first list", func() bool { return r.held(widgetGVR, "app") })
	r.endSync(t, widgetGVR, "app", fmt.Errorf("%w: the server could not find the requested resource", ErrGone))
	eventually(t, "the sync to stop", func() bool { return !r.held(widgetGVR, "app") })
	if got := routed(r.m, "/apis/example.com/v1/namespaces/app/widgets", "pod"); got != "main" {
		t.Errorf("after gone: got %q serving, want main (forwarded)", got)
	}
	if got := r.m.Report()[0].Stopped; got != stopGone {
		t.Errorf("got stopped %q, want %q", got, stopGone)
	}
	r.m.Authorized(context.Background(), opPod, listIn(widgetGVR, "app"))
	if r.held(widgetGVR, "app") {
		t.Fatalf("got the holding restarted by the next request, want it stopped for %s", goneRetry)
	}
	r.clock.Step(dropGrace)
	r.m.reconcile(context.Background())
	eventually(t, "the drop", func() bool { return len(r.m.Report()) == 0 })
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	key := "example.com/v1/widgets?forPods=true&namespace=app"
	if !slices.Equal(r.store.dropped, []string{key}) || r.store.scrubs == 0 {
		t.Errorf("got dropped %v with %d scrubs, want %s dropped and scrubbed", r.store.dropped, r.store.scrubs, key)
	}
}

// A namespace's holdings together keep its caps: one that would cross
// the object cap is refused and counted, another namespace's is untouched.
func TestNamespacedCaps(t *testing.T) {
	caps := Caps{NamespaceObjects: 5, NamespaceBytes: 1 << 30, TotalBytes: 1 << 30}
	tenant := door.Pod{Namespace: "app", Name: "tenant-b", UID: "uid-b", ServiceAccount: "tenant"}
	r := newNSRig(t, caps, false, opPod, tenant, otherPod)
	r.objects["app"], r.objects["other"] = 4, 4
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(cmGVR, "app"))
	r.m.Authorized(context.Background(), otherPod, listIn(cmGVR, "other"))
	eventually(t, "both first lists", func() bool { return r.held(cmGVR, "app") && r.held(cmGVR, "other") })
	// 4 more widgets would make app hold 8 > 5.
	r.m.Authorized(context.Background(), tenant, listIn(widgetGVR, "app"))
	eventually(t, "the refusal", func() bool { return r.m.Refusals("app", capObjects) == 1 })
	if r.held(widgetGVR, "app") || !r.held(cmGVR, "app") || !r.held(cmGVR, "other") {
		t.Errorf("got %+v, want widgets refused and both configmaps holdings untouched", r.m.Report())
	}
	if got := routed(r.m, "/apis/example.com/v1/namespaces/app/widgets", "pod"); got != "main" {
		t.Errorf("refused holding: got %q serving, want main (forwarded)", got)
	}
}

// Bytes count over every holding for pods, the cluster-wide ones
// included: at the cap, no holding starts.
func TestNamespacedTotalBytesCap(t *testing.T) {
	caps := Caps{NamespaceObjects: 100, NamespaceBytes: 1 << 30, TotalBytes: 1000, ClusterBytes: func() int64 { return 1000 }}
	r := newNSRig(t, caps, false, opPod)
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(cmGVR, "app"))
	if r.held(cmGVR, "app") || r.m.Refusals("app", capTotal) != 1 {
		t.Errorf("got %+v with %d refusals, want it refused once at %s", r.m.Report(), r.m.Refusals("app", capTotal), capTotal)
	}
}

// A holding that grows past a cap stops, its reads forwarded, and is
// dropped after the grace.
func TestNamespacedStopsWhenGrown(t *testing.T) {
	caps := Caps{NamespaceObjects: 100, NamespaceBytes: 1 << 30, TotalBytes: 1 << 30}
	r := newNSRig(t, caps, false, opPod)
	r.objects["app"] = 2
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(cmGVR, "app"))
	eventually(t, "the first list", func() bool { return r.held(cmGVR, "app") })
	r.m.mu.Lock()
	r.m.cfg.Caps.NamespaceObjects = 1 // as if the holding grew past it
	r.m.mu.Unlock()
	r.m.reconcile(context.Background())
	if r.held(cmGVR, "app") || r.m.Refusals("app", capObjects) != 1 {
		t.Fatalf("got %+v, want the holding stopped at %s", r.m.Report(), capObjects)
	}
	r.clock.Step(dropGrace)
	r.m.reconcile(context.Background())
	eventually(t, "the drop", func() bool { return len(r.m.Report()) == 0 })
}

// A restart resumes a stored holding without a reader.
func TestNamespacedRestartResumes(t *testing.T) {
	first := newNSRig(t, noCaps, false, opPod)
	first.start(t)
	first.m.Authorized(context.Background(), opPod, listIn(widgetGVR, "app"))
	eventually(t, "the first list", func() bool { return first.held(widgetGVR, "app") })
	stored, err := StoredNamespaced(context.Background(), memLister{first.store})
	if err != nil || len(stored) != 1 || stored[0].Resource.Namespace != "app" || stored[0].Resource.GVR != widgetGVR ||
		len(stored[0].Owners) != 1 || stored[0].Owners[0] != opPod {
		t.Fatalf("got stored %+v, %v, want widgets in app owned by %s", stored, err, opPod.Name)
	}
}

// memLister lists a memStore's meta by prefix.
type memLister struct{ s *memStore }

func (l memLister) MetaWithPrefix(_ context.Context, prefix string) (map[string][]byte, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range l.s.meta {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out[k] = v
		}
	}
	return out, nil
}

// A restart resumes a stored holding that still has an owner on the node,
// and drops one of secrets once pod-identity-resources no longer lists
// them.
func TestNamespacedRestoredHoldings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gvr      schema.GroupVersionResource
		secrets  bool
		wantHeld bool
	}{
		{"configmaps", cmGVR, false, true},
		{"secrets still listed", secretsGVR, true, true},
		{"secrets no longer listed", secretsGVR, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newNSRig(t, noCaps, tc.secrets, opPod)
			res := cloudsync.Resource{GVR: tc.gvr, Namespace: "app", ForPods: true}
			restored := RestoredHolding{Resource: res, Owners: []door.Pod{opPod}, Cache: versioncache.New(tc.gvr, 0)}
			cfg := r.m.cfg
			cfg.Restored = []RestoredHolding{restored}
			r.m = NewNamespaced(cfg)
			r.start(t)
			r.m.reconcile(context.Background())
			if got := r.held(tc.gvr, "app"); got != tc.wantHeld {
				t.Errorf("got held %v, want %v", got, tc.wantHeld)
			}
		})
	}
}

// A sync that ends on an unexpected error is not left marked running,
// which would serve its data stale: reads go back to the cloud.
func TestNamespacedFailedSyncStops(t *testing.T) {
	r := newNSRig(t, noCaps, false, opPod)
	r.start(t)
	r.m.Authorized(context.Background(), opPod, listIn(widgetGVR, "app"))
	eventually(t, "the first list", func() bool { return r.held(widgetGVR, "app") })
	r.endSync(t, widgetGVR, "app", fmt.Errorf("metadata client: boom"))
	eventually(t, "the sync to stop", func() bool { return !r.held(widgetGVR, "app") })
	if got := routed(r.m, "/apis/example.com/v1/namespaces/app/widgets", "pod"); got != "main" {
		t.Errorf("after a failed sync: got %q serving, want main (forwarded)", got)
	}
}
