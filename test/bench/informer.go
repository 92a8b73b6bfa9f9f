//go:build e2e

package bench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// informerSyncTimeout bounds one informer's initial sync.
const informerSyncTimeout = 2 * time.Minute

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
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return 0, 0, fmt.Errorf("%s informer: not synced within %s", name, informerSyncTimeout)
	}
	return time.Since(start), len(inf.GetStore().ListKeys()), nil
}
