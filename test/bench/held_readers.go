//go:build e2e

package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// heldReaderAgent is the User-Agent of the benchmark's components, which
// tells their own requests in the cloud's audit log from the daemon's on
// the same service account.
const heldReaderAgent = "bench-held-reader"

// proxyLabelSelector is kube-proxy's selector of the services and
// EndpointSlices it reads: neither those of another proxy nor headless.
const proxyLabelSelector = "!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name"

// Reader is one component's services and EndpointSlices informers, as
// kube-proxy runs them: protobuf, kube-proxy's label selector.
type Reader struct {
	name string
	// Cancel stops both informers.
	Cancel   context.CancelFunc
	services cache.SharedIndexInformer
	slices   cache.SharedIndexInformer
	// updates counts the EndpointSlice updates the reader has seen.
	updates atomic.Int64
	// synced is how long both informers took to sync.
	synced time.Duration
}

// ReaderConfig returns a protobuf client config for host on token.
func ReaderConfig(base *rest.Config, token string) *rest.Config {
	cfg := protoConfig(rest.AnonymousClientConfig(base))
	cfg.BearerToken = token
	cfg.UserAgent = heldReaderAgent
	cfg.QPS, cfg.Burst = ClientQPS, ClientBurst
	return cfg
}

// StartReader starts a reader on cfg and returns once both informers have
// synced, or fails after informerSyncTimeout; each EndpointSlice update
// it sees is also passed to onUpdate, if any.
func StartReader(ctx context.Context, cfg *rest.Config, name string, onUpdate ...func(obj any)) (*Reader, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s clientset: %w", name, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = proxyLabelSelector }))
	r := &Reader{name: name, Cancel: cancel,
		services: factory.Core().V1().Services().Informer(),
		slices:   factory.Discovery().V1().EndpointSlices().Informer()}
	if _, err := r.slices.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			r.updates.Add(1)
			for _, f := range onUpdate {
				f(obj)
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	start := time.Now()
	factory.Start(ctx.Done())
	wctx, wcancel := context.WithTimeout(ctx, informerSyncTimeout)
	defer wcancel()
	synced := func(context.Context) (bool, error) { return r.services.HasSynced() && r.slices.HasSynced(), nil }
	if err := wait.PollUntilContextCancel(wctx, informerPollEvery, true, synced); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: informers not synced within %s: %w", name, informerSyncTimeout, err)
	}
	r.synced = time.Since(start)
	return r, nil
}

// holds returns how many services and EndpointSlices the reader holds.
func (r *Reader) holds() (services, slices int) {
	return len(r.services.GetStore().ListKeys()), len(r.slices.GetStore().ListKeys())
}

// stopReaders stops every reader.
func stopReaders(rs []*Reader) {
	for _, r := range rs {
		r.Cancel()
	}
}
