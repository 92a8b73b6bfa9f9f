//go:build e2e

package direct

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// Node is what one node's kubelet reads: the node, its pods, and the
// namespace of their secrets and configmaps (each pod's share its name).
type Node struct {
	Name      string
	Namespace string
	Pods      []string
	// CatchUp bounds each wait for the read set's informers to sync.
	CatchUp time.Duration
}

// read is one list and watch a kubelet keeps open.
type read struct {
	client    rest.Interface
	resource  string
	namespace string
	field     fields.Selector
	obj       runtime.Object
}

// readSet is what n's kubelet lists and watches: its pods, its Node,
// every service, each referenced secret and configmap alone (the
// kubelet's watch-based object managers), RuntimeClasses and CSIDrivers.
func readSet(cs kubernetes.Interface, n Node) []read {
	core := cs.CoreV1().RESTClient()
	reads := []read{
		{core, "pods", metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", n.Name), &corev1.Pod{}},
		{core, "nodes", metav1.NamespaceAll, fields.OneTermEqualSelector("metadata.name", n.Name), &corev1.Node{}},
		{core, "services", metav1.NamespaceAll, fields.Everything(), &corev1.Service{}},
		{cs.NodeV1().RESTClient(), "runtimeclasses", metav1.NamespaceAll, fields.Everything(), &nodev1.RuntimeClass{}},
		{cs.StorageV1().RESTClient(), "csidrivers", metav1.NamespaceAll, fields.Everything(), &storagev1.CSIDriver{}},
	}
	for _, pod := range n.Pods {
		reads = append(reads, podReads(core, n.Namespace, pod)...)
	}
	return reads
}

// podReads are the per-object watches of pod's secret and configmap,
// which share its name.
func podReads(core rest.Interface, namespace, pod string) []read {
	name := fields.OneTermEqualSelector("metadata.name", pod)
	return []read{
		{core, "secrets", namespace, name, &corev1.Secret{}},
		{core, "configmaps", namespace, name, &corev1.ConfigMap{}},
	}
}

// Reads is one node's kubelet read set made directly against the cloud.
type Reads struct {
	cs   kubernetes.Interface
	node Node
	// pods is the pod informer's store; set by run, then read only.
	pods cache.Store
}

// Open runs n's kubelet read set against the cloud as the node until ctx
// ends, and returns once every informer has synced.
func Open(ctx context.Context, cfg *rest.Config, n Node) (*Reads, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = bench.ClientQPS, bench.ClientBurst
	// In protobuf, as a kubelet asks (--kube-api-content-type).
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeProtobuf, runtime.ContentTypeProtobuf+","+runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s clientset: %w", n.Name, err)
	}
	k := &Reads{cs: cs, node: n}
	if err := k.run(ctx, readSet(cs, n)); err != nil {
		return nil, err
	}
	return k, nil
}

// Clientset is the node's client of the cloud the reads are made with.
func (k *Reads) Clientset() kubernetes.Interface { return k.cs }

// run starts an informer for each read and waits until all have synced.
func (k *Reads) run(ctx context.Context, reads []read) error {
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
	wctx, cancel := context.WithTimeout(ctx, k.node.CatchUp)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), synced...) {
		return fmt.Errorf("%s: kubelet read set not synced: %w", k.node.Name, wctx.Err())
	}
	return nil
}

// servesPod reports whether the pod informer holds pod name.
func (k *Reads) servesPod(name string) bool {
	_, ok, err := k.pods.GetByKey(k.node.Namespace + "/" + name)
	return ok && err == nil
}

// AddPod catches up with a new pod as the kubelet does: once its pod
// informer holds the pod, it opens the per-object watches of the pod's
// secret and configmap and waits until they have synced.
func (k *Reads) AddPod(ctx context.Context, name string) error {
	err := bench.PollUntil(ctx, func() error {
		if !k.servesPod(name) {
			return fmt.Errorf("%s's pod informer does not hold %s", k.node.Name, name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return k.run(ctx, podReads(k.cs.CoreV1().RESTClient(), k.node.Namespace, name))
}
