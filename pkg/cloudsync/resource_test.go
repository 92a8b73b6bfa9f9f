package cloudsync

import "testing"

func TestResourceKey(t *testing.T) {
	tests := []struct {
		name string
		r    Resource
		want string
	}{
		{"core", Resource{GVR: cmGVR}, "/v1/configmaps"},
		{"group", Resource{GVR: cmGVR.GroupVersion().WithResource("leases")}, "/v1/leases"},
		{"narrowed", Resource{GVR: cmGVR, Namespace: "ns", FieldSelector: "spec.nodeName=n1"},
			"/v1/configmaps?fieldSelector=spec.nodeName%3Dn1&namespace=ns"},
		{"for pods", Resource{GVR: cmGVR, ForPods: true}, "/v1/configmaps?forPods=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Key(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	a := Resource{GVR: cmGVR, LabelSelector: "a=b"}
	b := Resource{GVR: cmGVR, LabelSelector: "a=c"}
	if a.Key() == b.Key() {
		t.Errorf("got equal keys %q for different selectors, want distinct", a.Key())
	}
}

// Each resource is stored under its own key, in order.
func TestStoredOf(t *testing.T) {
	res := []Resource{{GVR: cmGVR}, {GVR: cmGVR, Namespace: "ns"}, {GVR: cmGVR, ForPods: true}}
	got := StoredOf(res)
	if len(got) != len(res) {
		t.Fatalf("got %d, want %d", len(got), len(res))
	}
	for i, r := range res {
		t.Run(r.Key(), func(t *testing.T) {
			if got[i].GVR != r.GVR || got[i].Key != r.Key() || got[i].InfoKey != r.InfoKey() {
				t.Errorf("got %+v, want %v under %q and %q", got[i], r.GVR, r.Key(), r.InfoKey())
			}
		})
	}
}
