package link

import (
	"context"
	"math"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

const (
	// backoffInitial is the first retry delay after a failed list, watch
	// or commit.
	backoffInitial = 500 * time.Millisecond
	// MaxRetryDelay caps every retry delay, jitter included, so a cloud
	// that returns without the link prober noticing is still retried
	// within it.
	MaxRetryDelay = 10 * time.Second
	// backoffFactor doubles the delay on each consecutive failure.
	backoffFactor = 2.0
	// backoffJitter spreads retries of many edge nodes by up to +25%, so
	// they do not reconnect to the cloud in lockstep after an outage.
	backoffJitter = 0.25
	// backoffCap is the un-jittered cap: wait.Backoff adds the jitter on
	// top of it, so backoffCap*(1+backoffJitter) == MaxRetryDelay.
	backoffCap = time.Duration(float64(MaxRetryDelay) / (1 + backoffJitter))
	// maxRetryAfter bounds how long a cloud's Retry-After may pause a
	// sync, so a bogus header cannot stall it for hours.
	maxRetryAfter = 5 * time.Minute
	// DefaultRelistSpread is the default window (RelistDelay) over which
	// the watches and relists of a node are spread when the cloud comes
	// back: a cloud restart brings every link of a fleet back within a
	// probe interval, and answers every resumed watch 410 (its watch cache
	// starts empty), so a fleet's watches and relists return spread over
	// it rather than at once. Short against the 10 s resume after a link
	// cut; a large fleet sets a longer one (relist-spread).
	DefaultRelistSpread = 3 * time.Second
)

// NewBackoff returns the retry schedule of a sync that has not failed
// since its last successful commit.
func NewBackoff() wait.Backoff {
	return wait.Backoff{Duration: backoffInitial, Factor: backoffFactor, Jitter: backoffJitter,
		Steps: math.MaxInt32, Cap: backoffCap}
}

// RetryDelay is how long to wait after err: the next backoff step, or the
// cloud's Retry-After, jittered as b is, when that is longer. One
// Retry-After answers every client the cloud refused at once (kube-apiserver's
// priority and fairness names 1 s): each waits it plus its own share of
// jitter, so they do not all come back at the second it names and be
// refused together again.
func RetryDelay(b *wait.Backoff, err error) time.Duration {
	d := b.Step()
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && secs > 0 {
		ra := min(time.Duration(secs)*time.Second, maxRetryAfter)
		d = max(d, min(wait.Jitter(ra, b.Jitter), maxRetryAfter))
	}
	return d
}

// sleep waits d on c. It returns ctx.Err() if ctx ends first.
func Sleep(ctx context.Context, c clock.Clock, d time.Duration) error {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// Retrier paces the retries of a failing cloud call as a syncer's are
// paced: jittered exponential delays up to MaxRetryDelay, or the
// cloud's Retry-After when longer. Not safe for concurrent use.
type Retrier struct {
	clock    clock.Clock
	schedule func() wait.Backoff
	backoff  wait.Backoff
}

// NewRetrier returns a Retrier whose delays start over, timed on c.
func NewRetrier(c clock.Clock) *Retrier {
	return NewRetrierWith(c, NewBackoff)
}

// NewRetrierWith returns a Retrier paced by the schedules schedule
// returns (one per start over), timed on c.
func NewRetrierWith(c clock.Clock, schedule func() wait.Backoff) *Retrier {
	return &Retrier{clock: c, schedule: schedule, backoff: schedule()}
}

// Reset starts the delays over, after a call succeeded.
func (r *Retrier) Reset() { r.backoff = r.schedule() }

// Wait sleeps the delay after err. It returns ctx.Err() if ctx ends
// first.
func (r *Retrier) Wait(ctx context.Context, err error) error {
	return Sleep(ctx, r.clock, RetryDelay(&r.backoff, err))
}
