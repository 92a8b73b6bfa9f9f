//go:build e2e

package bench

import (
	"math"
	"time"
)

// The held-for-pods data set at scale 1, as issue 19 asks: this many
// services and as many EndpointSlices, one per service.
const heldBaseServices = 1000

// Shape of the held-for-pods run.
const (
	// heldEndpoints is the endpoints of each EndpointSlice: a small
	// Deployment's replicas.
	heldEndpoints = 3
	// heldReaders is how many components read services and EndpointSlices
	// at the end of each side: kube-proxy, CoreDNS and node-local DNS.
	heldReaders = 3
	// heldUpdatesPerSec is the EndpointSlice churn during each window:
	// a few rollouts' worth of endpoint changes a second.
	heldUpdatesPerSec = 5
	// heldWindow is each steady state counted at scale 1; heldSettle lets
	// the readers' starts finish first.
	heldWindow = time.Minute
	heldSettle = 10 * time.Second
	// heldDeliveryTimeout bounds how long after a window every reader may
	// take to have seen every update of it.
	heldDeliveryTimeout = 30 * time.Second
	// HeldNamespace holds the services and EndpointSlices.
	HeldNamespace = "held-bench"
	// HeldServiceCIDR is the cloud's service range: the framework's /24
	// has too few addresses for the data set.
	HeldServiceCIDR = "10.0.0.0/16"
)

// heldConfig sizes one held-for-pods run.
type heldConfig struct {
	// Services is how many services, and EndpointSlices, the cloud holds.
	Services      int
	UpdatesPerSec int
	// Window is each steady state counted; Settle precedes it.
	Window, Settle time.Duration
}

// heldScaled returns the run at a data set scale (BENCH_SCALE).
func heldScaled(scale float64) heldConfig {
	return heldConfig{
		Services:      int(math.Max(1, math.Round(heldBaseServices*scale))),
		UpdatesPerSec: heldUpdatesPerSec,
		Window:        heldWindow,
		Settle:        heldSettle,
	}
}

// heldSmokeConfig is make test's run: 20 services and slices, windows of
// a few seconds.
func heldSmokeConfig() heldConfig {
	c := heldScaled(0.02)
	c.Window, c.Settle = 3*time.Second, time.Second
	return c
}

// heldConfigFromEnv reads BENCH_SCALE.
func heldConfigFromEnv() (heldConfig, error) {
	c, err := configFromEnv()
	if err != nil {
		return heldConfig{}, err
	}
	return heldScaled(float64(c.Pods) / basePods), nil
}
