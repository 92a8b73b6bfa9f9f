//go:build e2e

package lease

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const (
	// Interval is the kubelet's Lease renewal period (the default
	// nodeLeaseDurationSeconds of 40 s divided by 4).
	Interval = 10 * time.Second
	// namespace holds the nodes' Leases.
	namespace = "kube-node-lease"
)

// maxAttempts is how many attempts the kubelet's lease controller makes
// at once at one renewal (component-helpers' maxUpdateRetries) before it
// waits for the next: its renewal fails only when every attempt did.
const maxAttempts = 5

// Failer counts a node's failed Lease renewal and keeps its error, and
// counts its attempts that failed and were made again at once.
type Failer interface {
	Fail(node string, err error)
	Retried(node string)
}

// Renew renews node's Lease every Interval through cs, as its kubelet
// does (renew), until ctx ends.
func Renew(ctx context.Context, cs kubernetes.Interface, node string, failed Failer) {
	leases := cs.CoordinationV1().Leases(namespace)
	var lease *coordinationv1.Lease
	for {
		lease = renew(ctx, leases, node, lease, failed)
		t := time.NewTimer(Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// renew makes one renewal of node's Lease from lease (nil: read, or
// create, it first), as the kubelet's lease controller does: up to
// maxAttempts attempts at once, the Lease read again after a Conflict.
// Each attempt made again is counted in failed.Retried, a renewal whose
// every attempt failed in failed.Fail. It returns the Lease as written,
// or nil after a failure.
func renew(ctx context.Context, leases leaseClient, node string, lease *coordinationv1.Lease, failed Failer) *coordinationv1.Lease {
	var err error
	for i := range maxAttempts {
		if i > 0 {
			failed.Retried(node)
		}
		var next *coordinationv1.Lease
		if next, err = attempt(ctx, leases, node, lease); err == nil {
			return next
		}
		if ctx.Err() != nil {
			return nil
		}
		if apierrors.IsConflict(err) {
			lease = nil
		}
	}
	failed.Fail(node, err)
	return nil
}

// leaseClient is the part of the Lease client renew uses.
type leaseClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error)
	Create(ctx context.Context, lease *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

// attempt writes node's Lease renewed from lease; with lease nil it reads
// the Lease first, or creates it renewed.
func attempt(ctx context.Context, leases leaseClient, node string, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	now := &metav1.MicroTime{Time: time.Now()}
	if lease == nil {
		got, err := leases.Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: namespace},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To(int32(40)), RenewTime: now}},
				metav1.CreateOptions{})
		}
		if err != nil {
			return nil, err
		}
		lease = got
	}
	lease = lease.DeepCopy()
	lease.Spec.RenewTime = now
	return leases.Update(ctx, lease, metav1.UpdateOptions{})
}
