//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// TestNodeScopeKubeletRebootOffline runs an unmodified hollow kubelet
// through apiserver-lite on the node's own credentials (node scope, no
// RBAC). Its pod mounts a secret and the projected service-account token,
// and starts again after a reboot of the whole node while the cloud is
// down: the secret is held on demand and the TokenRequest is answered from
// the store.
func TestNodeScopeKubeletRebootOffline(t *testing.T) {
	const ns = "nodescope-kubelet"
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{ns}})
	c.StartEdge()
	c.StartKubemark()
	c.WaitNodeReady()
	pod := createSecretAppPod(t, c, ns)
	running := waitPodRunning(t, c, ns, pod)
	if t.Failed() {
		return
	}

	rebootOffline(t, c)
	checkNotKilled(t, c, running)
	c.StartCloud()
	waitPodRunning(t, c, ns, pod)
}

// secretAppPod is the pod createSecretAppPod makes: it mounts secret
// secretAppSecret as volume "secret", and the projected service-account
// token as every pod does.
const (
	secretAppPod    = "secret-app"
	secretAppSecret = "app-secret"
)

// createSecretAppPod creates secretAppSecret and secretAppPod, bound to
// the node, in ns and returns the pod's name.
func createSecretAppPod(t *testing.T, c *framework.Cluster, ns string) string {
	t.Helper()
	ctx := t.Context()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretAppSecret}, Data: map[string][]byte{"k": []byte("v")}}
	if _, err := c.Admin.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: secretAppPod},
		Spec: corev1.PodSpec{
			NodeName:   c.NodeName,
			Containers: []corev1.Container{{Name: "app", Image: appImage, VolumeMounts: []corev1.VolumeMount{{Name: "secret", MountPath: "/etc/secret"}}}},
			Volumes:    []corev1.Volume{{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secretAppSecret}}}},
		},
	}
	if _, err := c.Admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return pod.Name
}

// rebootOffline stops the cloud, reboots the edge node (apiserver-lite and
// the hollow kubelet) and waits until the kubelet has mounted the pod's
// secret and projected token and started its container again, from the
// edge alone.
func rebootOffline(t *testing.T, c *framework.Cluster) {
	t.Helper()
	c.StopCloud()
	if err := c.KubemarkProcess().Kill(); err != nil {
		t.Fatalf("kill kubemark: %v", err)
	}
	c.KillEdge()
	c.StartEdge()
	c.StartKubemark()
	waitKubeletRestarted(t, c)
}

// kubeletRestartedLogs are what a hollow kubelet logs once it mounted
// secretAppPod's secret and a projected token and started a container.
var kubeletRestartedLogs = []string{
	`MountVolume.SetUp succeeded for volume \"secret\"`,
	`MountVolume.SetUp succeeded for volume \"kube-api-access-`,
	`"Type":"ContainerStarted"`,
}

// waitKubeletRestarted waits until the hollow kubelet's current run has
// mounted secretAppPod's secret and a projected token and started a
// container, within kubeletStartTimeout.
func waitKubeletRestarted(t *testing.T, c *framework.Cluster) {
	t.Helper()
	_, err := eventually(t.Context(), kubeletStartTimeout, func() (string, error) {
		log := c.KubemarkLog()
		for _, want := range kubeletRestartedLogs {
			if !strings.Contains(log, want) {
				return "", fmt.Errorf("kubemark has not logged %s", want)
			}
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("kubelet rebooted offline: %v\n%s", err, tail(c.KubemarkLog(), 40))
	}
}
