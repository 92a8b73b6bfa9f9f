package forpods

import (
	"testing"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// No holdings are no door holdings, runners or route, never a typed nil.
func TestNodeOfNone(t *testing.T) {
	if h := DoorHoldings(nil, nil); h != nil {
		t.Errorf("DoorHoldings(nil, nil): got %#v, want nil", h)
	}
	if RunnerOf(nil) != nil || CurrentOf(nil) != nil || NamespacedRunnerOf(nil) != nil {
		t.Error("runners of no holdings: got a function, want nil")
	}
	r := newRig(t, 2, newMemStore())
	if h, ok := DoorHoldings(r.m, nil).(*Holdings); !ok || h != r.m {
		t.Errorf("DoorHoldings(h, nil): got %#v, want h", DoorHoldings(r.m, nil))
	}
	if RunnerOf(r.m) == nil || CurrentOf(r.m) == nil {
		t.Error("runners of holdings: got nil, want their Run and Current")
	}
}

// A read is held for the doors when the synced resources or a namespaced
// holding hold it.
func TestDoorHeld(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ns := newNSRig(t, Caps{}, false).m
	ns.mu.Lock()
	ns.byKey[nsKey{cm, "team-a"}] = &nsHolding{}
	ns.mu.Unlock()
	synced := func(a requestinfo.Attributes) bool { return a.Resource == "services" }
	read := func(resource, namespace string) requestinfo.Attributes {
		return requestinfo.Attributes{ResourceRequest: true, Version: "v1", Resource: resource, Namespace: namespace}
	}
	for _, tc := range []struct {
		name string
		ns   *Namespaced
		a    requestinfo.Attributes
		want bool
	}{
		{"synced, no namespaced holdings", nil, read("services", ""), true},
		{"not synced, no namespaced holdings", nil, read("configmaps", "team-a"), false},
		{"synced", ns, read("services", ""), true},
		{"held in its namespace", ns, read("configmaps", "team-a"), true},
		{"held in another namespace", ns, read("configmaps", "team-b"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DoorHeld(synced, tc.ns)(tc.a); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
