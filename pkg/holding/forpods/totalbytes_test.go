package forpods

import (
	"context"
	"testing"
)

// A cluster-wide holding does not start while all holdings for pods hold
// pod-identity-max-bytes; the refusal is counted and reads stay the cloud's.
func TestClusterHoldingRefusedAtTotalBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		atTotal  bool
		wantHeld bool
	}{
		{"below the total", false, true},
		{"at the total", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 16, newMemStore(), proxyPod)
			r.m.cfg.AtTotalBytes = func() bool { return tc.atTotal }
			r.start(t)
			eventually(t, "Run to start", func() bool { r.m.mu.Lock(); defer r.m.mu.Unlock(); return r.m.runCtx != nil })
			r.m.Authorized(context.Background(), proxyPod, listAll(slicesGVR))
			key := r.m.byGVR[slicesGVR].Resource.Key()
			r.m.stats.mu.Lock()
			refused := r.m.stats.refused[key]
			r.m.stats.mu.Unlock()
			if held := r.m.Report()[1].Held; held != tc.wantHeld || (refused == 1) == tc.wantHeld {
				t.Errorf("got held %v with %d refusals, want held %v", held, refused, tc.wantHeld)
			}
		})
	}
}
