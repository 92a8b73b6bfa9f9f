package pool

import "k8s.io/client-go/tools/leaderelection"

// ElectionRequestsPerSecond is what the pinned election costs the cloud
// for a pool of members, on average: the leader UPDATEs the Lease once a
// RetryPeriod (client-go's fast path renews without a GET), and every
// other member GETs it once a RetryPeriod stretched by a jitter uniform
// in [0, leaderelection.JitterFactor] of it.
func ElectionRequestsPerSecond(members int) float64 {
	if members <= 0 {
		return 0
	}
	retry := RetryPeriod.Seconds()
	meanWait := retry * (1 + leaderelection.JitterFactor/2)
	return 1/retry + float64(members-1)/meanWait
}
