//go:build e2e

package fleet

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// kubeletReads is one node's kubelet read set made directly against the
// cloud: what the direct side's catch-up after a cloud restart reads.
type kubeletReads struct {
	cs   kubernetes.Interface
	node string
	// pods is the pod informer's store; set by run, then read only.
	pods cache.Store
}

// servesPod reports whether the pod informer holds pod name.
func (k *kubeletReads) servesPod(name string) bool {
	_, ok, err := k.pods.GetByKey(fleetNamespace + "/" + name)
	return ok && err == nil
}

// addPod catches up with a new pod as the kubelet does: once its pod
// informer holds the pod, it opens the per-object watches of the pod's
// secret and configmap and waits until they have synced.
func (k *kubeletReads) addPod(ctx context.Context, name string) error {
	err := bench.PollUntil(ctx, func() error {
		if !k.servesPod(name) {
			return fmt.Errorf("%s's pod informer does not hold %s", k.node, name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	core := k.cs.CoreV1().RESTClient()
	sel := fields.OneTermEqualSelector("metadata.name", name)
	return k.run(ctx, []kubeletRead{
		{core, "secrets", fleetNamespace, sel, &corev1.Secret{}},
		{core, "configmaps", fleetNamespace, sel, &corev1.ConfigMap{}},
	})
}
