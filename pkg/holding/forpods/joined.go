package forpods

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
)

// Joined tells both the cluster-wide and the namespaced holdings of each
// authorized read; either may be nil.
type Joined struct {
	Cluster    *Holdings
	Namespaced *Namespaced
}

// ForPods is the cluster-wide holdings' answer.
func (j Joined) ForPods(a requestinfo.Attributes) bool {
	return j.Cluster != nil && j.Cluster.ForPods(a)
}

// Authorized tells both.
func (j Joined) Authorized(ctx context.Context, pod door.Pod, a requestinfo.Attributes) {
	if j.Cluster != nil {
		j.Cluster.Authorized(ctx, pod, a)
	}
	if j.Namespaced != nil {
		j.Namespaced.Authorized(ctx, pod, a)
	}
}
