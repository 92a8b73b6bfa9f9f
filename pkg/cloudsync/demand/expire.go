package demand

import (
	"context"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/demand/nodescope"
)

// A start after the cloud restarted (a control-plane upgrade while the
// node was down) finds every stored resume point expired: the restarted
// watch cache starts above all of them. The first resumes the cloud
// answers 410 say so for the rest of their kind, whose resumes are then
// dropped before they are sent (while they wait for a place behind the
// first), and each object is read again at once: one request per object,
// where a resume and the read after its 410 are two.
//
// A kind's watch cache only moves its oldest point forward, across
// restarts too (it starts at the store's current revision), so a point
// not above one it expired is expired as well. Where that is wrong (one
// of several kube-apiservers behind a balancer with an older cache), a
// dropped resume only reads its object again, as a 410 would have. Only
// a start's own resumes are dropped, so a cloud whose history went
// backwards later (a restored etcd) resumes as before.

// dropExpiredResume marks ctx's request, a start's resume of an object of
// kind k from the stored point from, to be dropped unsent, as expired,
// once a start's resume of k from a point not below it was answered 410.
func (d *Holder) dropExpiredResume(ctx context.Context, k nodescope.Kind, from uint64) context.Context {
	return cloudsync.WithSendCheck(ctx, func() error {
		if expired := d.startExpired[k].Load(); from <= expired {
			return fmt.Errorf("resume from %d: %w at %d on this start", from, cloudsync.ErrExpired, expired)
		}
		return nil
	})
}

// startExpiredAt records that a start's resume of an object of kind k from
// the stored point rv was answered 410 (or dropped as such).
func (d *Holder) startExpiredAt(k nodescope.Kind, rv uint64) {
	e := &d.startExpired[k]
	for old := e.Load(); rv > old && !e.CompareAndSwap(old, rv); old = e.Load() {
	}
}
