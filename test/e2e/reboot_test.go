//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// Timing of the offline reboot scenario.
const (
	// kubeletStartTimeout bounds how long a restarted hollow kubelet takes
	// to read its pods from the edge and mount what it can.
	kubeletStartTimeout = time.Minute
	// offlineHold is how long the rebooted node stays offline after its
	// kubelet read its pods, while the test watches that nothing is killed.
	offlineHold = 15 * time.Second
	// heartbeatTimeout bounds the wait for the first node heartbeat after
	// the cloud returns: the kubelet retries registration with up to 7 s
	// backoff, then updates its status every 10 s.
	heartbeatTimeout = 90 * time.Second
)

// TestEdgeRebootOffline reboots the edge node (hollow kubelet and
// apiserver-lite) while the cloud is down. The kubelet must come back from
// what the edge persisted, keep its pod, and report to the cloud when it
// returns.
func TestEdgeRebootOffline(t *testing.T) {
	const ns = "reboot-e2e"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}})
	c.StartEdge()
	c.StartKubemark()
	c.WaitNodeReady()
	pod := startAppPod(t, c, ns)
	checkPodStatus(t, c, pod) // the edge holds the Running pod at the cloud's RV
	if t.Failed() {
		return
	}
	edgePod := getEdgePod(t, c, pod)
	heartbeat := readyHeartbeat(t, c)

	c.StopCloud()
	if err := c.KubemarkProcess().Kill(); err != nil {
		t.Fatalf("kill kubemark: %v", err)
	}
	c.KillEdge()
	rebooted := time.Now()
	c.StartEdge()
	c.StartKubemark()

	t.Run("offline", func(t *testing.T) {
		checkKubeletReadsPod(t, c, pod)
		time.Sleep(offlineHold)
		got := getEdgePod(t, c, pod)
		if got.ResourceVersion != edgePod.ResourceVersion || got.Status.Phase != corev1.PodRunning {
			t.Errorf("edge pod after reboot: got phase %s RV %s, want Running RV %s",
				got.Status.Phase, got.ResourceVersion, edgePod.ResourceVersion)
		}
		checkNotKilled(t, c, pod)
		// The projected token needs a TokenRequest, which only the cloud
		// answers, so the container itself may wait for the cloud.
		started := strings.Contains(c.KubemarkLog(), `"Type":"ContainerStarted"`)
		t.Logf("container started while offline: %v", started)
	})

	returned := time.Now()
	c.StartCloud()
	t.Run("cloud returns", func(t *testing.T) {
		checkHeartbeatAfter(t, c, heartbeat, returned)
		got := waitStartedAfter(t, c, ns, pod.Name, rebooted)
		checkPodStatus(t, c, got) // the edge resumed and serves the new status
		checkNotKilled(t, c, pod)
	})
}

// getEdgePod returns pod as the edge serves it in the node's pod list, the
// kubelet's own query.
func getEdgePod(t *testing.T, c *framework.Cluster, pod *corev1.Pod) corev1.Pod {
	t.Helper()
	sel := fields.OneTermEqualSelector("spec.nodeName", c.NodeName).String()
	list, err := c.EdgeClient().CoreV1().Pods("").List(t.Context(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("list pods through the edge: %v", err)
	}
	for _, p := range list.Items {
		if p.UID == pod.UID {
			return p
		}
	}
	t.Fatalf("edge pods with %s: no %s/%s in %s", sel, pod.Namespace, pod.Name, podSummary(list.Items))
	return corev1.Pod{}
}

// readyHeartbeat returns the cloud node's Ready lastHeartbeatTime.
func readyHeartbeat(t *testing.T, c *framework.Cluster) time.Time {
	t.Helper()
	node, err := c.Admin.CoreV1().Nodes().Get(t.Context(), c.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	ready := nodeReady(node)
	if ready == nil || ready.Status != corev1.ConditionTrue {
		t.Fatalf("node %s: Ready %v, want True", c.NodeName, ready)
	}
	return ready.LastHeartbeatTime.Time
}

// checkKubeletReadsPod waits until the restarted kubelet, with the cloud
// down, has taken its pod from the edge's API and mounted the pod's
// ConfigMap volume from what the edge serves.
func checkKubeletReadsPod(t *testing.T, c *framework.Cluster, pod *corev1.Pod) {
	t.Helper()
	key := pod.Namespace + "/" + pod.Name
	added := fmt.Sprintf(`"SyncLoop ADD" source="api" pods=[%q]`, key)
	mounted := regexp.MustCompile(`MountVolume.SetUp succeeded for volume \\"config\\".*` + regexp.QuoteMeta(string(pod.UID)))
	_, err := eventually(t.Context(), kubeletStartTimeout, func() (string, error) {
		log := c.KubemarkLog()
		switch {
		case !strings.Contains(log, added):
			return "", fmt.Errorf("kubemark has not logged %s", added)
		case !mounted.MatchString(log):
			return "", fmt.Errorf("kubemark has not mounted configmap volume config of %s", key)
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("kubelet after an offline reboot: %v\n%s", err, tail(c.KubemarkLog(), 40))
	}
}

// podTeardownSigns are kubelet log texts that show a pod being removed,
// its containers killed or its volumes torn down.
var podTeardownSigns = []string{"Killing", "SyncLoop REMOVE", "SyncLoop DELETE", "UnmountVolume"}

// checkNotKilled wants no sign in the current kubemark run that the pod
// was removed, its containers killed or its volumes unmounted.
func checkNotKilled(t *testing.T, c *framework.Cluster, pod *corev1.Pod) {
	t.Helper()
	key := fmt.Sprintf("%q", pod.Namespace+"/"+pod.Name)
	for _, line := range strings.Split(c.KubemarkLog(), "\n") {
		if !strings.Contains(line, key) && !strings.Contains(line, string(pod.UID)) {
			continue
		}
		for _, bad := range podTeardownSigns {
			if strings.Contains(line, bad) {
				t.Errorf("kubemark %s pod %s: %s", bad, key, line)
			}
		}
	}
}

// checkHeartbeatAfter waits until the cloud node's Ready condition is True
// with a heartbeat newer than before and not older than returned.
func checkHeartbeatAfter(t *testing.T, c *framework.Cluster, before, returned time.Time) {
	t.Helper()
	_, err := eventually(t.Context(), heartbeatTimeout, func() (string, error) {
		node, err := c.Admin.CoreV1().Nodes().Get(t.Context(), c.NodeName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		ready := nodeReady(node)
		if ready == nil || ready.Status != corev1.ConditionTrue {
			return "", fmt.Errorf("node %s: Ready %v", c.NodeName, ready)
		}
		hb := ready.LastHeartbeatTime.Time
		if !hb.After(before) || hb.Before(returned.Truncate(time.Second)) {
			return "", fmt.Errorf("node %s Ready heartbeat %s, want after %s and not before the return at %s",
				c.NodeName, hb, before, returned)
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(c.KubemarkLog(), 40))
	}
}

// waitStartedAfter waits until the cloud holds pod ns/name Running and
// Ready with its container started by the rebooted kubelet, and returns it.
// Right after the cloud returns it still holds the pre-reboot status, and
// the kubelet may need a while: its volume retries back off while the
// TokenRequest for the projected token fails offline.
func waitStartedAfter(t *testing.T, c *framework.Cluster, ns, name string, rebooted time.Time) *corev1.Pod {
	t.Helper()
	return waitPodRunningAnd(t, c, ns, name, func(p *corev1.Pod) error {
		if n := len(p.Status.ContainerStatuses); n != 1 {
			return fmt.Errorf("pod %s/%s: %d container statuses, want 1", ns, name, n)
		}
		running := p.Status.ContainerStatuses[0].State.Running
		if running == nil || running.StartedAt.Time.Before(rebooted.Truncate(time.Second)) {
			return fmt.Errorf("pod %s/%s: container state %+v, want running since the reboot at %s",
				ns, name, p.Status.ContainerStatuses[0].State, rebooted)
		}
		return nil
	})
}
