//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// syncedKind is one kind the default configuration syncs, besides pods,
// nodes, namespaces, configmaps and secrets, with the objects the Table
// tests print.
type syncedKind struct {
	resource string // as kubectl names it
	gvr      schema.GroupVersionResource
	// namespaced kinds live in the test namespace (leases in
	// kube-node-lease, created by mustCreateTableObjects).
	namespaced bool
	// object returns a manifest of this kind named name.
	object func(name string) map[string]any
}

// syncedKinds are the kinds whose kubectl get -o wide must match the cloud's
// in list, get and watch.
func syncedKinds(ns, node string) []syncedKind {
	core := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Version: "v1", Resource: r}
	}
	storage := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: r}
	}
	return []syncedKind{
		{"services", core("services"), true, func(name string) map[string]any {
			return manifest("v1", "Service", name, map[string]any{"spec": map[string]any{
				"type": "LoadBalancer", "externalIPs": []any{"192.0.2.10"}, "selector": map[string]any{"app": "web"},
				"ports": []any{map[string]any{"name": "http", "port": 80}, map[string]any{"name": "dns", "port": 53, "protocol": "UDP"}}}})
		}},
		{"endpointslices", schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, true,
			func(name string) map[string]any {
				return manifest("discovery.k8s.io/v1", "EndpointSlice", name, map[string]any{"addressType": "IPv4",
					"ports":     []any{map[string]any{"name": "http", "port": 80}, map[string]any{"name": "named"}},
					"endpoints": []any{map[string]any{"addresses": []any{"10.244.0.5"}}, map[string]any{"addresses": []any{"10.244.0.6"}}}})
			}},
		{"persistentvolumeclaims", core("persistentvolumeclaims"), true, func(name string) map[string]any {
			return manifest("v1", "PersistentVolumeClaim", name, map[string]any{"spec": map[string]any{
				"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "fast", "volumeMode": "Filesystem",
				"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}})
		}},
		{"persistentvolumes", core("persistentvolumes"), false, func(name string) map[string]any {
			return manifest("v1", "PersistentVolume", name, map[string]any{"spec": map[string]any{
				"capacity": map[string]any{"storage": "2Gi"}, "accessModes": []any{"ReadWriteOnce", "ReadOnlyMany"},
				"persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast", "hostPath": map[string]any{"path": "/srv/" + name},
				"claimRef": map[string]any{"namespace": ns, "name": "data"}}})
		}},
		{"csidrivers", storage("csidrivers"), false, func(name string) map[string]any {
			return manifest("storage.k8s.io/v1", "CSIDriver", name, map[string]any{"spec": map[string]any{
				"attachRequired": false, "podInfoOnMount": true, "volumeLifecycleModes": []any{"Persistent", "Ephemeral"},
				"tokenRequests": []any{map[string]any{"audience": "vault"}}}})
		}},
		{"csinodes", storage("csinodes"), false, func(name string) map[string]any {
			return manifest("storage.k8s.io/v1", "CSINode", name, map[string]any{"spec": map[string]any{
				"drivers": []any{map[string]any{"name": "csi.example.com", "nodeID": node}}}})
		}},
		{"runtimeclasses", schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}, false,
			func(name string) map[string]any {
				return manifest("node.k8s.io/v1", "RuntimeClass", name, map[string]any{"handler": "runc"})
			}},
	}
}

// manifest is an object of kind named name with fields.
func manifest(apiVersion, kind, name string, fields map[string]any) map[string]any {
	fields["apiVersion"], fields["kind"] = apiVersion, kind
	fields["metadata"] = map[string]any{"name": name}
	return fields
}

// listedName is the object of each synced kind created before the edge
// starts; CSINodes are named after their node.
func listedName(k syncedKind, node string) string {
	if k.resource == "csinodes" {
		return node
	}
	return "listed-" + k.resource
}

func kindClient(t *testing.T, c *framework.Cluster, k syncedKind, ns string) dynamic.ResourceInterface {
	t.Helper()
	dc, err := dynamic.NewForConfig(c.AdminConfig)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	if k.namespaced {
		return dc.Resource(k.gvr).Namespace(ns)
	}
	return dc.Resource(k.gvr)
}

// mustCreateKindObjects creates one object of every synced kind.
func mustCreateKindObjects(t *testing.T, c *framework.Cluster, ns string) {
	t.Helper()
	for _, k := range syncedKinds(ns, c.NodeName) {
		obj := &unstructured.Unstructured{Object: k.object(listedName(k, c.NodeName))}
		if _, err := kindClient(t, c, k, ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", k.resource, err)
		}
	}
}

// kindTableCases are kubectl get -o wide of every synced kind, listed and
// one object.
func kindTableCases(ns, node string) []tableCase {
	var cases []tableCase
	for _, k := range syncedKinds(ns, node) {
		list := []string{"get", k.resource, "-o", "wide"}
		one := []string{"get", k.resource, listedName(k, node), "-o", "wide"}
		if k.namespaced {
			list, one = append(list, "-n", ns), append(one, "-n", ns)
		}
		cases = append(cases, tableCase{k.resource + " wide", list}, tableCase{"one of " + k.resource, one})
	}
	return append(cases, tableCase{"leases wide", []string{"get", "leases", "-n", "kube-node-lease", "-o", "wide"}})
}

// kindTablePaths are the list paths of every synced kind, for comparing
// the Table JSON.
func kindTablePaths(ns, node string) []string {
	var paths []string
	for _, k := range syncedKinds(ns, node) {
		p := "/apis/" + k.gvr.GroupVersion().String()
		if k.gvr.Group == "" {
			p = "/api/v1"
		}
		if k.namespaced {
			p += "/namespaces/" + ns
		}
		paths = append(paths, p+"/"+k.resource)
	}
	return paths
}

// requireSameKindWatches runs kubectl get -o wide -w of every synced kind
// against both servers while an object is created and then labelled, and
// requires the same lines.
func requireSameKindWatches(t *testing.T, c *framework.Cluster, ns string) {
	for _, k := range syncedKinds(ns, c.NodeName) {
		if k.resource == "csinodes" {
			continue // one per node: there is no second one to create
		}
		t.Run(k.resource, func(t *testing.T) { requireSameKindWatch(t, c, ns, k) })
	}
}

func requireSameKindWatch(t *testing.T, c *framework.Cluster, ns string, k syncedKind) {
	args := []string{"get", k.resource, "-o", "wide", "-w"}
	if k.namespaced {
		args = append(args, "-n", ns)
	}
	cloudRun := c.StartKubectl(watchRunTime, c.AdminKubeconfig, args...)
	edgeRun := c.StartKubectl(watchRunTime, c.EdgeLocalKubeconfig, append([]string{"--server", c.EdgeURL}, args...)...)
	listed := listedName(k, c.NodeName)
	deadline := time.Now().Add(watchRunTime / 2)
	for !tableHasRow(cloudRun.Output(), listed) || !tableHasRow(edgeRun.Output(), listed) {
		if time.Now().After(deadline) {
			t.Fatalf("watches did not list within %s: cloud\n%s\nedge\n%s", watchRunTime/2, cloudRun.Output(), edgeRun.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	client := kindClient(t, c, k, ns)
	obj := &unstructured.Unstructured{Object: k.object("watched-" + k.resource)}
	if _, err := client.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", k.resource, err)
	}
	patch := []byte(`{"metadata":{"labels":{"watched":"yes"}}}`)
	if _, err := client.Patch(t.Context(), obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("label %s: %v", k.resource, err)
	}
	cloudOut, edgeOut := cloudRun.Wait(), edgeRun.Wait()
	t.Logf("kubectl %v through the edge:\n%s", args, edgeOut)
	if n := rowsOf(cloudOut, obj.GetName()); n < 2 {
		t.Fatalf("cloud watch output has %d rows of %s, want the created and the labelled one:\n%s", n, obj.GetName(), cloudOut)
	}
	if maskAges(edgeOut) != maskAges(cloudOut) {
		t.Errorf("kubectl %v through the edge:\n%s\nwant (from the cloud):\n%s", args, edgeOut, cloudOut)
	}
}

// rowsOf counts the lines of out that start with name.
func rowsOf(out, name string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if tableHasRow(line, name) {
			n++
		}
	}
	return n
}
