package listwatch

import "testing"

// heldFacts are the facts of a ready, resolved read of a resource held whole.
var heldFacts = routeFacts{resolved: true, ready: true, current: true, covered: true}

// with returns f changed by edit.
func with(f routeFacts, edit func(*routeFacts)) routeFacts {
	edit(&f)
	return f
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name  string
		facts routeFacts
		want  route
	}{
		{"unconfigured resource or subresource", routeFacts{reachable: true}, route{toCloud, reasonNotLocal}},
		{"not local, offline", routeFacts{}, route{toCloud, reasonNotLocal}},
		{"held on request, cache not ready", with(heldFacts, func(f *routeFacts) { f.ready, f.onRequest = false, true }),
			route{toCloud, reasonNotHeldNow}},
		{"configured, cache not ready", with(heldFacts, func(f *routeFacts) { f.ready = false }),
			route{toRefuse, reasonInitializing}},
		{"not ready beats an invalid request", with(heldFacts, func(f *routeFacts) { f.ready, f.invalid = false, true }),
			route{toRefuse, reasonInitializing}},
		{"held on request, not current, online", with(heldFacts, func(f *routeFacts) {
			f.onRequest, f.current, f.reachable = true, false, true
		}), route{toCloud, reasonNotCurrent}},
		{"not current beats an invalid request", with(heldFacts, func(f *routeFacts) {
			f.onRequest, f.current, f.reachable, f.invalid = true, false, true, true
		}), route{toCloud, reasonNotCurrent}},
		{"held on request, not current, offline", with(heldFacts, func(f *routeFacts) { f.onRequest, f.current = true, false }),
			route{toLocal, reasonHeld}},
		{"held on request and current, online", with(heldFacts, func(f *routeFacts) { f.onRequest, f.reachable = true, true }),
			route{toLocal, reasonHeld}},
		{"invalid options", with(heldFacts, func(f *routeFacts) { f.invalid = true }), route{toRefuse, reasonInvalid}},
		{"invalid beats wider", with(heldFacts, func(f *routeFacts) { f.invalid, f.covered, f.reachable = true, false, true }),
			route{toRefuse, reasonInvalid}},
		{"list within scope, online", with(heldFacts, func(f *routeFacts) { f.reachable = true }), route{toLocal, reasonHeld}},
		{"list within scope, offline", heldFacts, route{toLocal, reasonHeld}},
		{"list wider, online", with(heldFacts, func(f *routeFacts) { f.covered, f.reachable = false, true }),
			route{toCloud, reasonWider}},
		{"list wider, online, Table", with(heldFacts, func(f *routeFacts) { f.covered, f.reachable, f.table = false, true, true }),
			route{toCloud, reasonWider}},
		{"list wider, offline", with(heldFacts, func(f *routeFacts) { f.covered = false }), route{toRefuse, reasonWiderOffline}},
		{"list wider, offline, Table", with(heldFacts, func(f *routeFacts) { f.covered, f.table = false, true }),
			route{toLocal, reasonLimited}},
		{"get, a miss is 404", with(heldFacts, func(f *routeFacts) { f.get = true }), route{toLocal, reasonHeld}},
		{"get, a miss is 404 online too", with(heldFacts, func(f *routeFacts) { f.get, f.reachable = true, true }),
			route{toLocal, reasonHeld}},
		{"get, a miss is the cloud's", with(heldFacts, func(f *routeFacts) { f.get, f.covered, f.reachable = true, false, true }),
			route{toLocal, reasonHeldOrCloud}},
		{"get, a miss offline is 503", with(heldFacts, func(f *routeFacts) { f.get, f.covered = true, false }),
			route{toLocal, reasonHeldOrOffline}},
		{"get, a Table offline is no list", with(heldFacts, func(f *routeFacts) { f.get, f.covered, f.table = true, false, true }),
			route{toLocal, reasonHeldOrOffline}},
		{"get, invalid", with(heldFacts, func(f *routeFacts) { f.get, f.invalid = true, true }), route{toRefuse, reasonInvalid}},
	}
	seen := map[reason]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.facts)
			if got != tc.want {
				t.Errorf("decide(%+v) = %v %v, want %v %v", tc.facts, got.to, got.why, tc.want.to, tc.want.why)
			}
		})
		seen[tc.want.why] = true
	}
	for r := reason(1); int(r) < len(reasonNames); r++ {
		if !seen[r] {
			t.Errorf("reason %v: no case, want one per reason", r)
		}
	}
}

func TestReasonString(t *testing.T) {
	names := map[string]reason{}
	for r := reason(1); int(r) < len(reasonNames); r++ {
		s := r.String()
		if s == "unknown" {
			t.Errorf("reason %d has no name", r)
		}
		if other, dup := names[s]; dup {
			t.Errorf("reasons %d and %d both named %q", other, r, s)
		}
		names[s] = r
	}
	if got := reason(0).String(); got != "unknown" {
		t.Errorf("reason(0) = %q, want unknown", got)
	}
}
