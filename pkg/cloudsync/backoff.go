package cloudsync

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

const (
	// backoffInitial is the first retry delay after a failed list or watch.
	backoffInitial = 500 * time.Millisecond
	// backoffMax caps the retry delay so a returning cloud is noticed
	// within half a minute.
	backoffMax = 30 * time.Second
	// backoffFactor doubles the delay on each consecutive failure.
	backoffFactor = 2.0
	// backoffJitter spreads retries of many edge nodes by up to +50%, so
	// they do not reconnect to the cloud in lockstep after an outage.
	backoffJitter = 0.5
)

// backoff is a jittered exponential retry delay. Not safe for concurrent
// use: each Syncer owns one.
type backoff struct {
	clock clock.Clock
	next  time.Duration // the un-jittered delay of the next wait
}

func newBackoff(c clock.Clock) *backoff {
	return &backoff{clock: c, next: backoffInitial}
}

// reset forgets past failures, after a successful list or watch.
func (b *backoff) reset() { b.next = backoffInitial }

// wait sleeps for the current delay and grows it. It returns ctx.Err() if
// the context ends first.
func (b *backoff) wait(ctx context.Context) error {
	d := wait.Jitter(b.next, backoffJitter)
	b.next = min(time.Duration(float64(b.next)*backoffFactor), backoffMax)
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
