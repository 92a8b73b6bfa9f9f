//go:build e2e

package bench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Informer start timing.
const (
	// informerSyncTimeout bounds one informer's initial sync.
	informerSyncTimeout = 2 * time.Minute
	// informerPollEvery is how often HasSynced is polled: it bounds the
	// error of an informer start. cache.WaitForCacheSync polls every
	// 100 ms, which would round every start up to the next 100 ms.
	informerPollEvery = time.Millisecond
)

// informerStart starts a pod informer for the node over protobuf and
// returns the time until it has synced and how many pods it holds.
// client-go streams the initial state with WatchList (the WatchListClient
// feature is on by default) where the server supports it.
func informerStart(ctx context.Context, s *server, node string) (time.Duration, int, error) {
	return startInformer(ctx, protoConfig(s.cfg), s.name, node)
}

// startInformer is informerStart against any rest config.
func startInformer(ctx context.Context, cfg *rest.Config, name, node string) (time.Duration, int, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, 0, fmt.Errorf("%s informer clientset: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, informerSyncTimeout)
	defer cancel()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = podSelector(node) }))
	inf := factory.Core().V1().Pods().Informer()
	start := time.Now()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	synced := func(context.Context) (bool, error) { return inf.HasSynced(), nil }
	if err := wait.PollUntilContextCancel(ctx, informerPollEvery, true, synced); err != nil {
		return 0, 0, fmt.Errorf("%s informer: not synced within %s: %w", name, informerSyncTimeout, err)
	}
	return time.Since(start), len(inf.GetStore().ListKeys()), nil
}
