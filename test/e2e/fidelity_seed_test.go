//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Names of the objects seedCloud creates.
const (
	fidelityNS   = "fidelity"
	otherNode    = "cloud-only-node" // a node the edge does not serve
	boundPod     = "bound-here"      // bound to the edge node
	elsewherePod = "bound-elsewhere" // bound to otherNode
	followedCM   = "cm-a"            // updated after the informers synced
	watchedCM    = "cm-b"            // updated while kubectl get -w runs
)

// fixture names, by resource, the informer keys of seeded objects that the
// edge must serve (in) and those outside its scope that it must not (out).
type fixture struct {
	in, out map[string][]string
}

// checkScope checks every store against the fixture.
func (fx fixture) checkScope(t *testing.T, resources []syncedResource, stores []cache.Store) {
	t.Helper()
	for i, r := range resources {
		got := storeRVs(stores[i])
		for _, key := range fx.in[r.gvr.Resource] {
			if _, ok := got[key]; !ok {
				t.Errorf("%s: seeded %s is missing from the informer", r.gvr, key)
			}
		}
		for _, key := range fx.out[r.gvr.Resource] {
			if _, ok := got[key]; ok {
				t.Errorf("%s: %s is outside the edge's scope but the informer has it", r.gvr, key)
			}
		}
	}
}

// seedCloud creates objects of every synced kind in the cloud, some of them
// outside the edge's scope, and returns which keys the edge must serve.
func seedCloud(t *testing.T, c *framework.Cluster) fixture {
	t.Helper()
	creates := append(seedCore(t.Context(), c.Admin, c.NodeName), seedOthers(t.Context(), c.Admin, c.NodeName)...)
	for i, err := range creates {
		if err != nil {
			t.Fatalf("seed object %d: %v", i, err)
		}
	}
	key := func(name string) string { return fidelityNS + "/" + name }
	node := c.NodeName
	return fixture{
		in: map[string][]string{
			"pods": {key(boundPod)}, "nodes": {node}, "namespaces": {fidelityNS},
			"services": {key("web"), key("headless")}, "configmaps": {key(followedCM), key(watchedCM)},
			"secrets": {key("token")}, "persistentvolumeclaims": {key("claim")}, "persistentvolumes": {"pv-1"},
			"endpointslices": {key("web-1")}, "csidrivers": {"fidelity.csi.example.com"}, "csinodes": {node},
			"runtimeclasses": {"fidelity-rc"}, "leases": {"kube-node-lease/" + node},
		},
		out: map[string][]string{
			"pods": {key(elsewherePod), key("unbound")}, "nodes": {otherNode}, "leases": {key("elsewhere")},
		},
	}
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// seedCore creates the core/v1 objects and returns each create's error.
func seedCore(ctx context.Context, cs kubernetes.Interface, node string) []error {
	pod := func(name, nodeName string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: objectMeta(name), Spec: corev1.PodSpec{NodeName: nodeName,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	}
	core, ns := cs.CoreV1(), fidelityNS
	return []error{
		createIn(ctx, core.Nodes(), &corev1.Node{ObjectMeta: objectMeta(node)}),
		createIn(ctx, core.Nodes(), &corev1.Node{ObjectMeta: objectMeta(otherNode)}),
		createIn(ctx, core.Pods(ns), pod(boundPod, node)),
		createIn(ctx, core.Pods(ns), pod(elsewherePod, otherNode)),
		createIn(ctx, core.Pods(ns), pod("unbound", "")),
		createIn(ctx, core.Services(ns), &corev1.Service{ObjectMeta: objectMeta("web"),
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}),
		createIn(ctx, core.Services(ns), &corev1.Service{ObjectMeta: objectMeta("headless"),
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 53}}}}),
		createIn(ctx, core.ConfigMaps(ns), &corev1.ConfigMap{ObjectMeta: objectMeta(followedCM), Data: map[string]string{"k": "a"}}),
		createIn(ctx, core.ConfigMaps(ns), &corev1.ConfigMap{ObjectMeta: objectMeta(watchedCM), Data: map[string]string{"k": "b"}}),
		createIn(ctx, core.Secrets(ns), &corev1.Secret{ObjectMeta: objectMeta("token"), StringData: map[string]string{"t": "s3cr3t"}}),
		createIn(ctx, core.PersistentVolumeClaims(ns), seedPVC()),
		createIn(ctx, core.PersistentVolumes(), seedPV()),
	}
}

// seedOthers creates the objects of the other API groups, including a lease
// outside kube-node-lease, and returns each create's error.
func seedOthers(ctx context.Context, cs kubernetes.Interface, node string) []error {
	return []error{
		createIn(ctx, cs.DiscoveryV1().EndpointSlices(fidelityNS), seedEndpointSlice()),
		createIn(ctx, cs.StorageV1().CSIDrivers(), &storagev1.CSIDriver{ObjectMeta: objectMeta("fidelity.csi.example.com")}),
		createIn(ctx, cs.StorageV1().CSINodes(), &storagev1.CSINode{ObjectMeta: objectMeta(node)}),
		createIn(ctx, cs.NodeV1().RuntimeClasses(), &nodev1.RuntimeClass{ObjectMeta: objectMeta("fidelity-rc"), Handler: "runc"}),
		createIn(ctx, cs.CoordinationV1().Leases("kube-node-lease"), &coordinationv1.Lease{ObjectMeta: objectMeta(node)}),
		createIn(ctx, cs.CoordinationV1().Leases(fidelityNS), &coordinationv1.Lease{ObjectMeta: objectMeta("elsewhere")}),
	}
}

// typedCreator is the Create method every typed client has.
type typedCreator[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
}

// createIn creates obj with the typed client c.
func createIn[T any](ctx context.Context, c typedCreator[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

func seedPVC() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
}

func seedPV() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv-1"}},
		},
	}
}

func seedEndpointSlice() *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.5"}}},
	}
}

// checkInformerFollows updates followedCM in the cloud and waits until the
// informer's store holds the cloud's new resourceVersion: after the sync
// (and the WatchList fallback) the informer's watch through the edge is live.
func checkInformerFollows(t *testing.T, c *framework.Cluster, store cache.Store) {
	t.Helper()
	cms := c.Admin.CoreV1().ConfigMaps(fidelityNS)
	cm, err := cms.Get(t.Context(), followedCM, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s from the cloud: %v", followedCM, err)
	}
	cm.Data["updated"] = strconv.FormatInt(time.Now().UnixNano(), 10)
	if cm, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update %s in the cloud: %v", followedCM, err)
	}
	key := fidelityNS + "/" + followedCM
	got, err := eventually(t.Context(), edgeSyncTimeout, func() (string, error) {
		rv := storeRVs(store)[key]
		if rv != cm.ResourceVersion {
			return rv, fmt.Errorf("informer has %s at resourceVersion %q", key, rv)
		}
		return rv, nil
	})
	if err != nil {
		t.Fatalf("after a cloud update to resourceVersion %s: %v", cm.ResourceVersion, err)
	}
	t.Logf("informer followed the cloud update of %s to resourceVersion %s", key, got)
}
