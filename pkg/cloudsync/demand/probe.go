package demand

import (
	"context"
	"sync"
	"time"
)

// probeSettle is how long a probe's resumed watch that delivered nothing
// is given before the cloud is taken to still serve its resourceVersion.
// A cloud that no longer serves it, as a restarted one, answers 410 at
// once, in the watch response's first frame (kube-apiserver's watch cache
// sends it as the first event); an object that did not change sends
// nothing for up to a minute, until its first bookmark.
const probeSettle = time.Second

// outage is one loss of the cloud as the node's per-object watches saw
// it: the workers that lost the cloud join it and wait for one probe, the
// resume of the newest resume point among them, whose answer tells all of
// them whether the cloud still serves their points. Invariant: done is
// closed exactly once, under prober.mu, when decided is set, and expired
// is written only before that; every field but done is guarded by
// prober.mu.
type outage struct {
	// done is closed once the probe decided.
	done    chan struct{}
	decided bool
	// expired is the probe's answer: the cloud answered 410.
	expired bool
	// lost are the resume points of the workers waiting on this outage,
	// by worker generation; a worker leaves when it stops undecided.
	lost map[uint64]uint64
	// probing is the generation of the worker probing, 0 while none.
	probing uint64
	// changed is closed, and replaced, when a worker left undecided, so
	// the waiting ones choose the prober again.
	changed chan struct{}
}

// prober shares one probe per outage among a Holder's workers. The
// current outage is replaced once decided, so a worker that loses the
// cloud after a probe's answer starts the next outage (epoch) and does
// not take an answer about an older loss.
type prober struct {
	mu sync.Mutex
	// cur is the undecided outage workers join; nil when none. Guarded
	// by mu.
	cur *outage
}

// join adds the worker gen, resuming from rv, to the undecided outage,
// starting one if none is, and returns it.
func (p *prober) join(gen, rv uint64) *outage {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		p.cur = &outage{done: make(chan struct{}), lost: map[uint64]uint64{}, changed: make(chan struct{})}
	}
	p.cur.lost[gen] = rv
	return p.cur
}

// await blocks until o is decided, returning whether the cloud answered
// 410, or until gen is the worker to probe o (probe true): the one with
// the newest resume point, as long as no other probes. It fails only when
// ctx ends.
func (p *prober) await(ctx context.Context, o *outage, gen uint64) (probe, expired bool, err error) {
	for {
		p.mu.Lock()
		if o.decided {
			p.mu.Unlock()
			return false, o.expired, nil
		}
		if o.probing == 0 && newest(o.lost) == gen {
			o.probing = gen
		}
		if o.probing == gen {
			p.mu.Unlock()
			return true, false, nil
		}
		changed := o.changed
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return false, false, ctx.Err()
		case <-o.done:
		case <-changed:
		}
	}
}

// newest returns the generation of the newest resume point in lost (the
// lowest generation of equal ones), 0 when lost is empty.
func newest(lost map[uint64]uint64) uint64 {
	var gen, rv uint64
	for g, r := range lost {
		if r > rv || (r == rv && g < gen) {
			gen, rv = g, r
		}
	}
	return gen
}

// decide records the probe's answer for o and wakes every worker waiting
// on it; the first answer wins.
func (p *prober) decide(o *outage, expired bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.decided {
		return
	}
	o.decided, o.expired = true, expired
	close(o.done)
	if p.cur == o {
		p.cur = nil
	}
}

// leave removes the worker gen, stopping, from the undecided o; if it was
// the one chosen to probe, the waiting workers choose again.
func (p *prober) leave(o *outage, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.decided {
		return
	}
	delete(o.lost, gen)
	if len(o.lost) == 0 && p.cur == o {
		p.cur = nil
	}
	close(o.changed)
	o.changed = make(chan struct{})
	if o.probing == gen {
		o.probing = 0
	}
}
