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

// Failer counts a node's failed Lease renewal and keeps its error.
type Failer interface {
	Fail(node string, err error)
}

// Renew renews node's Lease every Interval through cs, as its kubelet
// does, until ctx ends; a failed renewal reads the Lease again at the
// next one, and is counted in failed.
func Renew(ctx context.Context, cs kubernetes.Interface, node string, failed Failer) {
	leases := cs.CoordinationV1().Leases(namespace)
	var lease *coordinationv1.Lease
	for {
		var err error
		switch {
		case lease == nil:
			lease, err = leases.Get(ctx, node, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				lease, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: namespace},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To(int32(40))}}, metav1.CreateOptions{})
			}
		default:
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		}
		if err != nil {
			lease = nil
			if ctx.Err() == nil {
				failed.Fail(node, err)
			}
		}
		t := time.NewTimer(Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
