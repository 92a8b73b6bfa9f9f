//go:build e2e

package fleet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// caughtUp waits until node i's apiserver-lite serves pods of its pods
// and, unless marker is empty, the secret marker. The pods are watched
// through the door, as the kubelet watches them, not polled: the polls of
// a catch-up's waiters spent the very cores the fleet's restart was short
// of. The secret is polled only once the pods are served.
func (f *fleet) caughtUp(ctx context.Context, i, pods int, marker string) error {
	if err := f.nodes[i].WaitReady(fleetCatchUp); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, fleetCatchUp)
	defer cancel()
	local, err := f.watchClient(i)
	if err != nil {
		return err
	}
	if err := servesPods(ctx, local, nodeName(i), pods); err != nil {
		return fmt.Errorf("%s: %w", nodeName(i), err)
	}
	if marker == "" {
		return nil
	}
	err = bench.PollUntil(ctx, func() error {
		_, err := local.CoreV1().Secrets(fleetNamespace).Get(ctx, marker, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", nodeName(i), err)
	}
	return nil
}

// servesPods waits until node's pods as served through cs number want,
// with a list and then a watch of them.
func servesPods(ctx context.Context, cs kubernetes.Interface, node string, want int) error {
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	lw := cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.FieldSelector = sel })
	var store cache.Store // set by the precondition, before any condition runs
	served := func() bool { return len(store.ListKeys()) == want }
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{},
		func(s cache.Store) (bool, error) { store = s; return served(), nil },
		func(watch.Event) (bool, error) { return served(), nil })
	if err != nil {
		got := -1 // not listed yet
		if store != nil {
			got = len(store.ListKeys())
		}
		return fmt.Errorf("serves %d pods, want %d: %w", got, want, err)
	}
	return nil
}
