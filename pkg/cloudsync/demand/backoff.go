package demand

import (
	"math"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// objectRetryInitial is the first delay before one object's watch (or
	// list) is tried again after the cloud refused it. A node starts or
	// resumes all its objects' watches at once, and a fleet's nodes do so
	// together after a cloud restart: the cloud's priority and fairness
	// answers 429 to many of them, and the Node authorizer 403 to those of
	// a new pod until its graph has the pod. A second, not a syncer's half
	// second, so the refused do not come back before the others are done.
	objectRetryInitial = time.Second
	// objectRetryFactor doubles the delay on each consecutive failure.
	objectRetryFactor = 2.0
	// objectRetryJitter spreads each delay d over [d, 2d): objects refused
	// together retry spread over as long as they waited, not together
	// again as the syncers' +25% would leave them.
	objectRetryJitter = 1.0
	// objectRetryCap is the un-jittered cap, so that with the jitter a
	// delay stays within link.MaxRetryDelay.
	objectRetryCap = time.Duration(float64(link.MaxRetryDelay) / (1 + objectRetryJitter))
)

// newRefRetry is the first delay, jittered over [d, 2d), before a new
// reference's first read is tried again after the cloud answered it 403.
// The node reads the object as soon as its own watch shows the pod that
// references it, which can be before the Node authorizer's graph has the
// pod: measured, the reads came 4-90 ms after the pod's create and were
// refused, and 1.1-2.0 s later (objectRetryInitial) they were answered.
// The graph lags the pod by milliseconds, so the first retry of such a
// read comes sooner; a second refusal takes objectBackoff's schedule.
// References held before (resumed from a stored point) and relists after
// a 410 never take it, so a cloud restart's refusals are spread as before.
const newRefRetry = 100 * time.Millisecond

// newRefDelay is newRefRetry, jittered as objectBackoff's delays are.
func newRefDelay() time.Duration {
	return wait.Jitter(newRefRetry, objectRetryJitter)
}

// objectBackoff is the retry schedule of one object's watch that has not
// failed since it last reached the cloud. The cloud's Retry-After, when
// longer, wins (link.RetryDelay).
func objectBackoff() wait.Backoff {
	return wait.Backoff{Duration: objectRetryInitial, Factor: objectRetryFactor, Jitter: objectRetryJitter,
		Steps: math.MaxInt32, Cap: objectRetryCap}
}
