//go:build e2e

package fleet

import (
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// kubeletRead is one list and watch a kubelet keeps open.
type kubeletRead struct {
	client    rest.Interface
	resource  string
	namespace string
	field     fields.Selector
	obj       runtime.Object
}

// kubeletReadSet is what node's kubelet lists and watches: its pods, its
// Node, every service, each referenced secret and configmap alone (the
// kubelet's watch-based object managers), RuntimeClasses and CSIDrivers.
func kubeletReadSet(cs kubernetes.Interface, node string, pods []string) []kubeletRead {
	core := cs.CoreV1().RESTClient()
	reads := []kubeletRead{
		{core, "pods", metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", node), &corev1.Pod{}},
		{core, "nodes", metav1.NamespaceAll, fields.OneTermEqualSelector("metadata.name", node), &corev1.Node{}},
		{core, "services", metav1.NamespaceAll, fields.Everything(), &corev1.Service{}},
		{cs.NodeV1().RESTClient(), "runtimeclasses", metav1.NamespaceAll, fields.Everything(), &nodev1.RuntimeClass{}},
		{cs.StorageV1().RESTClient(), "csidrivers", metav1.NamespaceAll, fields.Everything(), &storagev1.CSIDriver{}},
	}
	for _, pod := range pods {
		name := fields.OneTermEqualSelector("metadata.name", pod) // each pod's secret and configmap share its name
		reads = append(reads,
			kubeletRead{core, "secrets", fleetNamespace, name, &corev1.Secret{}},
			kubeletRead{core, "configmaps", fleetNamespace, name, &corev1.ConfigMap{}})
	}
	return reads
}

// openKubeletReads runs node's kubelet read set against the cloud as the
// node until ctx ends, and returns once every informer has synced. pods
// names the node's pods.
func openKubeletReads(ctx context.Context, cfg *rest.Config, node string, pods []string) (*kubeletReads, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = bench.ClientQPS, bench.ClientBurst
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s clientset: %w", node, err)
	}
	k := &kubeletReads{cs: cs, node: node}
	if err := k.run(ctx, kubeletReadSet(cs, node, pods)); err != nil {
		return nil, err
	}
	return k, nil
}

// run starts an informer for each read and waits until all have synced.
func (k *kubeletReads) run(ctx context.Context, reads []kubeletRead) error {
	var synced []cache.InformerSynced
	for _, r := range reads {
		lw := cache.NewListWatchFromClient(r.client, r.resource, r.namespace, r.field)
		inf := cache.NewSharedIndexInformer(lw, r.obj, 0, cache.Indexers{})
		if r.resource == "pods" {
			k.pods = inf.GetStore()
		}
		go inf.RunWithContext(ctx)
		synced = append(synced, inf.HasSynced)
	}
	wctx, cancel := context.WithTimeout(ctx, fleetCatchUp)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), synced...) {
		return fmt.Errorf("%s: kubelet read set not synced: %w", k.node, wctx.Err())
	}
	return nil
}
