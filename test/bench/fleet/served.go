//go:build e2e

package fleet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// caughtUp waits until node i's apiserver-lite serves pods of its pods
// and, unless marker is empty, the secret marker. Both are watched through
// the door, as the kubelet watches them, not polled: the polls of a
// catch-up's waiters spent the very cores the fleet's restart was short
// of, and a poll of a secret the daemon does not hold yet is sent on to
// the cloud.
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
	if err := servesSecret(ctx, local, marker); err != nil {
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
	got, err := untilServed(ctx, lw, &corev1.Pod{}, want)
	if err != nil {
		return fmt.Errorf("serves %d pods, want %d: %w", got, want, err)
	}
	return nil
}

// servesSecret waits until the fleet's secret name is served through cs,
// with a list and then a watch of it by name, as the kubelet reads it.
func servesSecret(ctx context.Context, cs kubernetes.Interface, name string) error {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := cache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "secrets", fleetNamespace,
		func(o *metav1.ListOptions) { o.FieldSelector = sel })
	if _, err := untilServed(ctx, lw, &corev1.Secret{}, 1); err != nil {
		return fmt.Errorf("secret %s not served: %w", name, err)
	}
	return nil
}

// untilServed lists and watches lw until it holds want objects of obj's
// kind, and returns how many it held last (-1: not listed yet).
func untilServed(ctx context.Context, lw cache.ListerWatcher, obj runtime.Object, want int) (int, error) {
	var store cache.Store // set by the precondition, before any condition runs
	served := func() bool { return len(store.ListKeys()) == want }
	_, err := watchtools.UntilWithSync(ctx, lw, obj,
		func(s cache.Store) (bool, error) { store = s; return served(), nil },
		func(watch.Event) (bool, error) { return served(), nil })
	if store == nil {
		return -1, err
	}
	return len(store.ListKeys()), err
}
