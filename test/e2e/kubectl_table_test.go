//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// watchRunTime is how long a kubectl get -w runs before it is stopped; it
// must list within half of it.
const watchRunTime = 8 * time.Second

// tableCase is one kubectl get whose output must match kube-apiserver's.
type tableCase struct {
	name string
	args []string
}

// TestKubectlTablesMatchCloud runs kubectl get (plain, -o wide,
// --show-labels, -w) against kube-apiserver and apiserver-lite for the same
// objects and requires the same columns and cells, ages aside; then it
// stops the cloud, clears kubectl's discovery cache and requires the same
// output from apiserver-lite alone.
func TestKubectlTablesMatchCloud(t *testing.T) {
	const ns = "tables"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	mustCreateTableObjects(t, c, ns)
	mustCreateKindObjects(t, c, ns)
	c.StartEdge()
	cases := []tableCase{
		{"pods", []string{"get", "pods", "-n", ns}},
		{"pods wide", []string{"get", "pods", "-n", ns, "-o", "wide"}},
		{"pods labels", []string{"get", "pods", "-n", ns, "--show-labels"}},
		{"one pod", []string{"get", "pod", "web-1", "-n", ns}},
		{"nodes", []string{"get", "nodes"}},
		{"nodes wide", []string{"get", "nodes", "-o", "wide"}},
		{"configmaps", []string{"get", "cm", "-n", ns}},
		{"namespace", []string{"get", "ns", ns}},
		{"secrets", []string{"get", "secrets", "-n", ns}},
		{"leases", []string{"get", "leases", "-n", "kube-node-lease"}},
	}
	cases = append(cases, kindTableCases(ns, c.NodeName)...)
	t.Run("watch", func(t *testing.T) { requireSameWatch(t, c, ns) })
	t.Run("watch kinds", func(t *testing.T) { requireSameKindWatches(t, c, ns) })
	cloud := map[string]string{}
	for _, tc := range cases {
		out, err := c.KubectlCloud(tc.args...)
		if err != nil {
			t.Fatalf("cloud %s: %v", tc.name, err)
		}
		cloud[tc.name] = maskAges(out)
	}
	t.Run("online", func(t *testing.T) { requireSameTables(t, c, cases, cloud) })
	t.Run("cells", func(t *testing.T) { requireSameCells(t, c, ns, kindTablePaths(ns, c.NodeName)) })
	cloudVersion, err := c.KubectlCloud("version", "-o", "json")
	if err != nil {
		t.Fatalf("cloud version: %v", err)
	}
	cloudDiscovery := map[string]aggregatedDoc{}
	for _, path := range []string{"/api", "/apis"} {
		cloudDiscovery[path] = mustAggregated(t, c.Admin.CoreV1().RESTClient(), path)
	}
	c.StopCloud()
	c.ClearKubectlCache()
	t.Run("offline aggregated discovery", func(t *testing.T) {
		for path, cloud := range cloudDiscovery {
			requireAggregatedSubset(t, path, mustAggregated(t, c.EdgeClient().CoreV1().RESTClient(), path), cloud)
		}
	})
	t.Run("offline", func(t *testing.T) { requireSameTables(t, c, cases, cloud) })
	t.Run("offline version", func(t *testing.T) {
		out, err := c.KubectlEdge("version", "-o", "json")
		if err != nil {
			t.Fatalf("kubectl version through the edge: %v", err)
		}
		if got, want := serverVersion(t, out), serverVersion(t, cloudVersion); got != want || got.GitVersion == "" {
			t.Errorf("server version through the offline edge: got %+v, want the cloud's %+v", got, want)
		}
	})
}

// aggregatedDoc is an aggregated discovery answer.
type aggregatedDoc struct {
	contentType string
	list        apidiscoveryv2.APIGroupDiscoveryList
}

func mustAggregated(t *testing.T, rc rest.Interface, path string) aggregatedDoc {
	t.Helper()
	var d aggregatedDoc
	raw, err := rc.Get().AbsPath(path).SetHeader("Accept", discovery.AcceptV2+","+discovery.AcceptV1).
		Do(t.Context()).ContentType(&d.contentType).Raw()
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if err := json.Unmarshal(raw, &d.list); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return d
}

// requireAggregatedSubset requires the edge's offline document to have the
// cloud's content type and kind, and every resource it lists to equal the
// cloud's entry for it, subresources aside (they are not kept offline).
func requireAggregatedSubset(t *testing.T, path string, edge, cloud aggregatedDoc) {
	if edge.contentType != cloud.contentType || edge.list.TypeMeta != cloud.list.TypeMeta {
		t.Errorf("%s: got %q %+v, want the cloud's %q %+v", path, edge.contentType, edge.list.TypeMeta, cloud.contentType, cloud.list.TypeMeta)
	}
	want := map[string]apidiscoveryv2.APIResourceDiscovery{}
	for _, g := range cloud.list.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				r.Subresources = nil
				want[g.Name+"/"+v.Version+"/"+r.Resource] = r
			}
		}
	}
	n := 0
	for _, g := range edge.list.Items {
		for _, v := range g.Versions {
			if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
				t.Errorf("%s: %s/%s freshness %q, want Current", path, g.Name, v.Version, v.Freshness)
			}
			for _, r := range v.Resources {
				n++
				key := g.Name + "/" + v.Version + "/" + r.Resource
				if w, ok := want[key]; !ok || !reflect.DeepEqual(r, w) {
					t.Errorf("%s: %s: got %+v, want the cloud's %+v", path, key, r, w)
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no resources offline", path)
	}
}

// serverVersion decodes kubectl version -o json's serverVersion.
func serverVersion(t *testing.T, out string) version.Info {
	t.Helper()
	var v struct {
		ServerVersion *version.Info `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ServerVersion == nil {
		t.Fatalf("decode kubectl version %q: %v", out, err)
	}
	return *v.ServerVersion
}

func requireSameTables(t *testing.T, c *framework.Cluster, cases []tableCase, cloud map[string]string) {
	for _, tc := range cases {
		out, err := eventually(t.Context(), edgeSyncTimeout, func() (string, error) {
			out, err := c.KubectlEdge(tc.args...)
			if err == nil && maskAges(out) != cloud[tc.name] {
				err = fmt.Errorf("got\n%s\nwant\n%s", maskAges(out), cloud[tc.name])
			}
			return out, err
		})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		t.Logf("kubectl %s through the edge:\n%s", strings.Join(tc.args, " "), out)
	}
}

// requireSameCells compares the Table JSON both servers answer for the
// built-in paths and more, with ages masked: column definitions, cells and
// row conditions.
func requireSameCells(t *testing.T, c *framework.Cluster, ns string, more []string) {
	for _, path := range append([]string{"/api/v1/namespaces/" + ns + "/pods", "/api/v1/nodes", "/api/v1/namespaces/" + ns + "/configmaps",
		"/api/v1/namespaces/" + ns + "/pods/web-1", "/api/v1/namespaces/" + ns, "/api/v1/namespaces/" + ns + "/secrets",
		"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"}, more...) {
		var tables [2]string
		for i, rc := range []rest.Interface{c.Admin.CoreV1().RESTClient(), c.EdgeClient().CoreV1().RESTClient()} {
			raw, err := rc.Get().AbsPath(path).Param("includeObject", "None").SetHeader("Accept", kubectlTableAccept).Do(t.Context()).Raw()
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			var tbl metav1.Table
			if err := json.Unmarshal(raw, &tbl); err != nil {
				t.Fatalf("decode %s: %v", raw, err)
			}
			tbl.ResourceVersion = ""
			for _, r := range tbl.Rows {
				for j, cell := range r.Cells {
					if s, ok := cell.(string); ok && agePattern.MatchString(s) {
						r.Cells[j] = "AGE"
					}
				}
			}
			b, _ := json.MarshalIndent(tbl, "", " ")
			tables[i] = string(b)
		}
		if tables[0] != tables[1] {
			t.Errorf("Table of %s through the edge:\n%s\nwant (from the cloud):\n%s", path, tables[1], tables[0])
		}
	}
}

// kubectlTableAccept is the Accept header kubectl get sends.
const kubectlTableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// requireSameWatch runs kubectl get cm -w against both servers while a
// configmap is created and changed, and requires the same lines.
func requireSameWatch(t *testing.T, c *framework.Cluster, ns string) {
	args := []string{"get", "cm", "-n", ns, "-w"}
	cloudRun := c.StartKubectl(watchRunTime, c.AdminKubeconfig, args...)
	edgeRun := c.StartKubectl(watchRunTime, c.EdgeLocalKubeconfig, append([]string{"--server", c.EdgeURL}, args...)...)
	// Change the configmap only once both have printed the initial list.
	deadline := time.Now().Add(watchRunTime / 2)
	for !tableHasRow(cloudRun.Output(), "settings") || !tableHasRow(edgeRun.Output(), "settings") {
		if time.Now().After(deadline) {
			t.Fatalf("watches did not list within %s: cloud\n%s\nedge\n%s", watchRunTime/2, cloudRun.Output(), edgeRun.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Data: map[string]string{"a": "1"}}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	cm.Data["b"] = "2"
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update configmap: %v", err)
	}
	cloudOut, edgeOut := cloudRun.Wait(), edgeRun.Wait()
	t.Logf("kubectl get cm -n %s -w through the edge:\n%s", ns, edgeOut)
	if !tableHasRow(cloudOut, "watched", "1") || !tableHasRow(cloudOut, "watched", "2") {
		t.Fatalf("cloud watch output lacks the created and updated rows:\n%s", cloudOut)
	}
	if maskAges(edgeOut) != maskAges(cloudOut) {
		t.Errorf("kubectl get cm -w through the edge:\n%s\nwant (from the cloud):\n%s", edgeOut, cloudOut)
	}
}

// agePattern matches kubectl's human durations (5s, 3m2s, 2d1h, 60m).
var agePattern = regexp.MustCompile(`(^|\s)(\d+[smhdy])+(\s|$)`)

// maskAges replaces durations with AGE so outputs taken seconds apart
// compare equal.
func maskAges(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		fields := strings.Fields(l)
		for j, f := range fields {
			if agePattern.MatchString(f) {
				fields[j] = "AGE"
			}
		}
		lines[i] = strings.Join(fields, " ")
	}
	return strings.Join(lines, "\n")
}

// mustCreateTableObjects creates the edge node, two pods bound to it (one
// running and ready with labels) and a configmap.
func mustCreateTableObjects(t *testing.T, c *framework.Cluster, ns string) {
	t.Helper()
	ctx := t.Context()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: c.NodeName, Labels: map[string]string{"node-role.kubernetes.io/edge": ""}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", OSImage: "Debian GNU/Linux 13", KernelVersion: "6.12.0",
				ContainerRuntimeVersion: "containerd://2.1.0", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
	if _, err := c.Admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	for _, name := range []string{"web-1", "web-2"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web", "name": name}},
			Spec: corev1.PodSpec{NodeName: c.NodeName, Containers: []corev1.Container{
				{Name: "app", Image: "registry.k8s.io/pause:3.10"}, {Name: "side", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if _, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
	}
	pod, err := c.Admin.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.5", PodIPs: []corev1.PodIP{{IP: "10.244.0.5"}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Ready: true, State: running, Image: "registry.k8s.io/pause:3.10"},
			{Name: "side", RestartCount: 2, Image: "registry.k8s.io/pause:3.10",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}
	if _, err := c.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update pod status: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1", "b": "2"}}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"user": []byte("u"), "pass": []byte("p")}}
	if _, err := c.Admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	holder := c.NodeName
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
	if _, err := c.Admin.CoordinationV1().Leases("kube-node-lease").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease: %v", err)
	}
}
