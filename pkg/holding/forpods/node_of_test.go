package forpods

import (
	"testing"
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
