package link

import (
	"context"
	"sync"
)

// rvReadings shares the readings of the cloud's current resourceVersion
// among the syncers of one cloud. A cloud's resourceVersions are its etcd's
// revision, one counter for every resource kept there, so one reading
// begun after a syncer's check became due tells that syncer, whatever
// resource of that etcd was listed for it, whether the cloud is behind its
// watermark: the syncers of a daemon that starts, or that lost the cloud,
// need the check together and make one LIST instead of one each. Which
// resources share a count is the caller's to know.
type rvReadings struct {
	mu sync.Mutex
	// begun counts the readings begun. Guarded by mu.
	begun uint64
	// last is the newest reading that succeeded, and lastSeq its number
	// (its begun count); lastSeq is 0 before the first. Guarded by mu.
	last, lastSeq uint64
	// flight is the reading in progress, nil when none. Guarded by mu.
	flight *rvFlight
}

// rvFlight is one reading in progress: rv and err are set before done is
// closed and never after.
type rvFlight struct {
	seq  uint64
	done chan struct{}
	rv   uint64
	err  error
}

// RVTicket marks the moment a syncer's check of the cloud's resourceVersion
// became due: only a reading begun after it (CloudRV) can answer the check.
func (l *Link) RVTicket() uint64 {
	l.rvs.mu.Lock()
	defer l.rvs.mu.Unlock()
	return l.rvs.begun
}

// CloudRV returns the cloud's current resourceVersion as read by a reading
// begun after ticket (RVTicket): the newest that succeeded, the one in
// flight, or else a new one made with read, which the callers that come
// while it runs share. A failed reading's error goes to every caller that
// waited for it; the next call begins another. read runs with the context
// of the call that began it.
func (l *Link) CloudRV(ctx context.Context, ticket uint64, read func(context.Context) (uint64, error)) (uint64, error) {
	r := &l.rvs
	r.mu.Lock()
	if r.lastSeq > ticket {
		rv := r.last
		r.mu.Unlock()
		return rv, nil
	}
	f := r.flight
	if f == nil || f.seq <= ticket {
		r.begun++
		f = &rvFlight{seq: r.begun, done: make(chan struct{})}
		r.flight = f
		r.mu.Unlock()
		l.readRV(ctx, f, read)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-f.done:
		return f.rv, f.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// readRV makes the reading f with read and publishes its outcome.
func (l *Link) readRV(ctx context.Context, f *rvFlight, read func(context.Context) (uint64, error)) {
	f.rv, f.err = read(ctx)
	r := &l.rvs
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.err == nil && f.seq > r.lastSeq {
		r.last, r.lastSeq = f.rv, f.seq
	}
	if r.flight == f {
		r.flight = nil
	}
	close(f.done)
}
