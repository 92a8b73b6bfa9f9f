//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// The workload a hollow kubelet runs through the edge: a pod bound to the
// node that reads a ConfigMap as an env var and as a volume, and mounts the
// default service account token (kube-api-access-*, added by admission).
const (
	appConfigMap = "app-config"
	appPod       = "app"
	appKey       = "greeting"
	appValue     = "hello from the cloud"
	appImage     = "registry.k8s.io/pause:3.10"
)

// Timeouts of the kubelet scenarios, generous for a loaded two-core machine.
const (
	// podRunningTimeout bounds a bound pod's way to Running in the cloud:
	// the kubelet sees it through the edge, mounts its volumes (token
	// request included) and patches its status through the proxy.
	podRunningTimeout = 2 * time.Minute
	// leaseRenewTimeout covers a few node lease renewals; the kubelet renews
	// every 10 s (a quarter of the 40 s lease duration).
	leaseRenewTimeout = time.Minute
	// eventTimeout bounds the wait for proxied events to reach the cloud.
	eventTimeout = 30 * time.Second
)

// nodeLeaseNamespace holds the kubelets' heartbeat leases.
const nodeLeaseNamespace = "kube-node-lease"

// serviceAccountPodNameKey is the user extra a TokenReview of a pod-bound
// service account token reports the pod name under.
const serviceAccountPodNameKey = "authentication.kubernetes.io/pod-name"

// TestHollowKubeletThroughEdge runs a hollow kubelet whose only API server
// is apiserver-lite: everything it reads comes from the edge, everything it
// writes is proxied to the cloud.
func TestHollowKubeletThroughEdge(t *testing.T) {
	const ns = "kubelet-e2e"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	c.StartKubemark()
	c.WaitNodeReady()
	pod := startAppPod(t, c, ns)

	t.Run("node served by the edge", func(t *testing.T) { checkEdgeNodeReady(t, c) })
	t.Run("pod status", func(t *testing.T) { checkPodStatus(t, c, pod) })
	t.Run("configmap volume", func(t *testing.T) { checkConfigMapVolume(t, c, pod) })
	t.Run("service account token", func(t *testing.T) { checkServiceAccountToken(t, c, pod) })
	t.Run("node lease renewed", func(t *testing.T) { checkLeaseRenewed(t, c) })
	t.Run("kubelet events", func(t *testing.T) { checkKubeletEvents(t, c, pod) })
}

// startAppPod creates the app ConfigMap and a pod bound to the edge node in
// the cloud, and waits until the cloud reports it Running.
func startAppPod(t *testing.T, c *framework.Cluster, ns string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: appConfigMap},
		Data:       map[string]string{appKey: appValue},
	}
	if _, err := c.Admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	ref := corev1.LocalObjectReference{Name: appConfigMap}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: appPod},
		Spec: corev1.PodSpec{
			NodeName: c.NodeName,
			Containers: []corev1.Container{{
				Name: "app", Image: appImage,
				Env: []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: appKey},
				}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref},
			}}},
		},
	}
	if _, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return waitPodRunning(t, c, ns, appPod)
}

// waitPodRunning waits until the cloud reports pod ns/name in phase Running
// with its Ready condition True, and returns the pod as last seen.
func waitPodRunning(t *testing.T, c *framework.Cluster, ns, name string) *corev1.Pod {
	t.Helper()
	return waitPodRunningAnd(t, c, ns, name, nil)
}

// waitPodRunningAnd is waitPodRunning with an extra condition on the pod;
// a nil check adds none.
func waitPodRunningAnd(t *testing.T, c *framework.Cluster, ns, name string, check func(*corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	_, err := eventually(t.Context(), podRunningTimeout, func() (string, error) {
		got, err := c.Admin.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		pod = got
		ready := podCondition(got, corev1.PodReady)
		if got.Status.Phase != corev1.PodRunning || ready == nil || ready.Status != corev1.ConditionTrue {
			return "", fmt.Errorf("pod %s/%s: phase %q, Ready %v", ns, name, got.Status.Phase, ready)
		}
		if check != nil {
			return "", check(got)
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("wait for pod Running: %v\n%s", err, tail(c.KubemarkLog(), 40))
	}
	return pod
}

// checkEdgeNodeReady reads the node through the edge and wants the Ready
// condition the kubelet wrote to the cloud.
func checkEdgeNodeReady(t *testing.T, c *framework.Cluster) {
	_, err := eventually(t.Context(), edgeSyncTimeout, func() (string, error) {
		node, err := c.EdgeClient().CoreV1().Nodes().Get(t.Context(), c.NodeName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if ready := nodeReady(node); ready == nil || ready.Status != corev1.ConditionTrue {
			return "", fmt.Errorf("node %s through the edge: Ready %v", c.NodeName, ready)
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// checkPodStatus wants the kubelet's status in the cloud (a running
// container) and the same object, same RV, in the edge's node pod list.
func checkPodStatus(t *testing.T, c *framework.Cluster, pod *corev1.Pod) {
	if n := len(pod.Status.ContainerStatuses); n != 1 || pod.Status.ContainerStatuses[0].State.Running == nil {
		t.Errorf("cloud pod container statuses: got %+v, want one running container", pod.Status.ContainerStatuses)
	}
	sel := fields.OneTermEqualSelector("spec.nodeName", c.NodeName).String()
	_, err := eventually(t.Context(), edgeSyncTimeout, func() (string, error) {
		cloud, err := c.Admin.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		list, err := c.EdgeClient().CoreV1().Pods("").List(t.Context(), metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return "", err
		}
		for _, p := range list.Items {
			if p.UID == cloud.UID && p.ResourceVersion == cloud.ResourceVersion && p.Status.Phase == corev1.PodRunning {
				return "", nil
			}
		}
		return "", fmt.Errorf("edge pods with %s: no Running %s/%s at cloud RV %s in %s",
			sel, pod.Namespace, pod.Name, cloud.ResourceVersion, podSummary(list.Items))
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// checkConfigMapVolume reads the ConfigMap volume the kubelet wrote from
// what it fetched through the edge.
func checkConfigMapVolume(t *testing.T, c *framework.Cluster, pod *corev1.Pod) {
	path := filepath.Join(podVolumeDir(c, pod, "kubernetes.io~configmap", "config"), appKey)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("configmap volume: %v", err)
	}
	if string(got) != appValue {
		t.Errorf("configmap volume %s: got %q, want %q", path, got, appValue)
	}
}

// checkServiceAccountToken reads the projected token the kubelet requested
// through the edge and has the cloud review it: it must be the default
// service account's token, bound to this pod.
func checkServiceAccountToken(t *testing.T, c *framework.Cluster, pod *corev1.Pod) {
	vol := ""
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				vol = v.Name
			}
		}
	}
	if vol == "" {
		t.Fatalf("pod has no projected service account token volume: %+v", pod.Spec.Volumes)
	}
	token, err := os.ReadFile(filepath.Join(podVolumeDir(c, pod, "kubernetes.io~projected", vol), "token"))
	if err != nil {
		t.Fatalf("service account token: %v", err)
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: string(token)}}
	got, err := c.Admin.AuthenticationV1().TokenReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token review: %v", err)
	}
	wantUser := fmt.Sprintf("system:serviceaccount:%s:default", pod.Namespace)
	if !got.Status.Authenticated || got.Status.User.Username != wantUser {
		t.Fatalf("token review: got authenticated=%v user %q (%s), want %q",
			got.Status.Authenticated, got.Status.User.Username, got.Status.Error, wantUser)
	}
	if podName := got.Status.User.Extra[serviceAccountPodNameKey]; len(podName) != 1 || podName[0] != pod.Name {
		t.Errorf("token review %s: got %v, want [%s]", serviceAccountPodNameKey, podName, pod.Name)
	}
}

// podVolumeDir is where the hollow kubelet's current run keeps a volume.
func podVolumeDir(c *framework.Cluster, pod *corev1.Pod, plugin, volume string) string {
	return filepath.Join(c.KubemarkRootDir(), "pods", string(pod.UID), "volumes", plugin, volume)
}

// checkLeaseRenewed wants the node lease held by the node, owned by the
// node object (whose UID the kubelet read through the edge), renewed in the
// cloud, and the edge to serve the renewal too. The kubelet creates the lease
// on the first renewal after its node exists.
func checkLeaseRenewed(t *testing.T, c *framework.Cluster) {
	node, err := c.Admin.CoreV1().Nodes().Get(t.Context(), c.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	var first *coordinationv1.Lease
	_, err = eventually(t.Context(), leaseRenewTimeout, func() (string, error) {
		l, err := c.Admin.CoordinationV1().Leases(nodeLeaseNamespace).Get(t.Context(), c.NodeName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		first = l
		return "", nil
	})
	if err != nil {
		t.Fatalf("get node lease: %v", err)
	}
	if h := first.Spec.HolderIdentity; h == nil || *h != c.NodeName || first.Spec.RenewTime == nil {
		t.Fatalf("node lease: holder %v renewTime %v, want holder %s", h, first.Spec.RenewTime, c.NodeName)
	}
	if refs := first.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].UID != node.UID {
		t.Errorf("node lease owner references: got %+v, want Node %s UID %s", refs, c.NodeName, node.UID)
	}
	renewedAfter := func(client kubernetes.Interface, where string) func() (string, error) {
		return func() (string, error) {
			l, err := client.CoordinationV1().Leases(nodeLeaseNamespace).Get(t.Context(), c.NodeName, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(first.Spec.RenewTime.Time) {
				return "", fmt.Errorf("%s lease renewTime %v, not after %v", where, l.Spec.RenewTime, first.Spec.RenewTime)
			}
			return l.ResourceVersion, nil
		}
	}
	rv, err := eventually(t.Context(), leaseRenewTimeout, renewedAfter(c.Admin, "cloud"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Logf("lease renewed in the cloud: RV %s -> %s", first.ResourceVersion, rv)
	if _, err := eventually(t.Context(), edgeSyncTimeout, renewedAfter(c.EdgeClient(), "edge")); err != nil {
		t.Errorf("%v", err)
	}
}

// checkKubeletEvents records a repeated pod event through the edge with
// the kubelet's own event machinery (client-go's record broadcaster and
// source component "kubelet", as cmd/kubelet wires it; the hollow kubelet
// itself drops its events into a fake recorder). The first occurrence is a
// proxied POST, the repeat a proxied PATCH; the cloud must hold one Event
// with count 2.
func checkKubeletEvents(t *testing.T, c *framework.Cluster, pod *corev1.Pod) {
	const reason = "Pulled"
	broadcaster := record.NewBroadcaster(record.WithContext(t.Context()))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.EdgeClient().CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: c.NodeName})
	for range 2 {
		recorder.Eventf(pod, corev1.EventTypeNormal, reason, "Container image %q already present on machine", appImage)
	}
	sel := fields.Set{"involvedObject.name": pod.Name, "reason": reason, "source": "kubelet"}.String()
	_, err := eventually(t.Context(), eventTimeout, func() (string, error) {
		list, err := c.Admin.CoreV1().Events(pod.Namespace).List(t.Context(), metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return "", err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.UID == pod.UID && e.Source.Host == c.NodeName && e.Count == 2 {
				return "", nil
			}
		}
		return "", fmt.Errorf("cloud events with %s: %d, none for pod UID %s with count 2: %+v", sel, len(list.Items), pod.UID, list.Items)
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
}

func podCondition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func nodeReady(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// podSummary lists pods as ns/name=phase@RV for error messages.
func podSummary(pods []corev1.Pod) string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, fmt.Sprintf("%s/%s=%s@%s", p.Namespace, p.Name, p.Status.Phase, p.ResourceVersion))
	}
	return fmt.Sprint(out)
}

// tail returns at most the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
