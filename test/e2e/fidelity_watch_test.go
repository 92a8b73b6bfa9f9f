//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// watchedNS holds the objects TestWatchedStoredAsCloudJSON makes, each
// named watchedName.
const (
	watchedNS   = "watched"
	watchedName = "w"
)

// watchedObject is one object made after apiserver-lite started, so that
// it reaches it through a cloud watch, and the resource key it is stored
// under.
type watchedObject struct {
	res  cloudsync.Resource // as the default resources list has it
	path string             // the object's URL path in the cloud
}

// TestWatchedStoredAsCloudJSON makes and changes objects of built-in kinds
// after apiserver-lite started: its cloud watches ask for protobuf, and
// each object must be stored byte for byte as the cloud's JSON of it.
func TestWatchedStoredAsCloudJSON(t *testing.T) {
	c := framework.New(t, framework.Options{Namespaces: []string{watchedNS}})
	c.StartEdge()
	ctx := t.Context()
	cloud, err := kubernetes.NewForConfig(c.AdminConfig)
	if err != nil {
		t.Fatalf("cloud clientset: %v", err)
	}
	objs := makeWatchedObjects(ctx, t, cloud, c.NodeName)
	edge := c.EdgeClient()
	want := map[string][]byte{}
	for _, o := range objs {
		raw, err := cloud.CoreV1().RESTClient().Get().AbsPath(o.path).DoRaw(ctx)
		if err != nil {
			t.Fatalf("cloud GET %s: %v", o.path, err)
		}
		obj, _, err := versioncache.NewTypedObject(bytes.TrimSpace(raw))
		if err != nil {
			t.Fatalf("cloud JSON of %s: %v", o.path, err)
		}
		want[o.path] = obj.Raw
		if out, err := eventually(ctx, edgeSyncTimeout, func() (string, error) {
			got, err := edge.CoreV1().RESTClient().Get().AbsPath(o.path).DoRaw(ctx)
			if err != nil || !strings.Contains(string(got), fmt.Sprintf(`"resourceVersion":"%d"`, obj.RV)) {
				return string(got), fmt.Errorf("not at the cloud's resourceVersion %d: %v", obj.RV, err)
			}
			return "", nil
		}); err != nil {
			t.Fatalf("edge GET %s: %v\n%s", o.path, err, out)
		}
	}
	c.KillEdge()
	for _, o := range objs {
		checkStoredAs(ctx, t, c, o, want[o.path])
	}
	if log := c.EdgeProcess().Tail(400); strings.Contains(log, "cannot store whole") {
		t.Errorf("apiserver-lite fell back to JSON:\n%s", log)
	}
}

// checkStoredAs checks that o is stored with the bytes want.
func checkStoredAs(ctx context.Context, t *testing.T, c *framework.Cluster, o watchedObject, want []byte) {
	t.Helper()
	s, err := c.ReadEdgeStore(ctx, o.res.Key())
	if err != nil {
		t.Fatalf("read edge store %s: %v", o.res.Key(), err)
	}
	for _, got := range s.Objects {
		if got.Namespace == watchedNS && got.Name == watchedName {
			if !bytes.Equal(got.Raw, want) {
				t.Errorf("%s: got stored\n%s\nwant the cloud's\n%s", o.path, got.Raw, want)
			}
			return
		}
	}
	t.Errorf("%s: not stored under %s", o.path, o.res.Key())
}

// makeWatchedObjects makes a ConfigMap (then changes it), a Service and a
// Pod bound to node, with the fields whose JSON and protobuf differ most.
func makeWatchedObjects(ctx context.Context, t *testing.T, cloud kubernetes.Interface, node string) []watchedObject {
	t.Helper()
	meta := metav1.ObjectMeta{Name: watchedName, Namespace: watchedNS, Labels: map[string]string{"b": "2", "a": "1"},
		Annotations: map[string]string{"html": "<&>", "line": "\u2028"}}
	cc := cloud.CoreV1()
	cm, err := cc.ConfigMaps(watchedNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"z": "1"},
		BinaryData: map[string][]byte{"bin": {0, 0xff}}}, metav1.CreateOptions{})
	if err == nil {
		cm.Data["y"] = "2"
		_, err = cc.ConfigMaps(watchedNS).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("configmap: %v", err)
	}
	_, err = cc.Services(watchedNS).Create(ctx, &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromString("https")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("service: %v", err)
	}
	_, err = cc.Pods(watchedNS).Create(ctx, &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1.5Gi")},
		}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pod: %v", err)
	}
	path := "/api/v1/namespaces/" + watchedNS + "/"
	core := func(r string) cloudsync.Resource {
		return cloudsync.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: r}}
	}
	pods := core("pods")
	pods.FieldSelector = "spec.nodeName=" + node
	return []watchedObject{
		{core("configmaps"), path + "configmaps/" + watchedName},
		{core("services"), path + "services/" + watchedName},
		{pods, path + "pods/" + watchedName},
	}
}
