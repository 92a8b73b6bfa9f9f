//go:build e2e

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// The workload the hollow kubelet runs: a pod bound to the edge node that
// reads a ConfigMap.
const (
	demoNamespace = "demo"
	demoConfigMap = "hello-config"
	demoPod       = "hello"
	demoImage     = "registry.k8s.io/pause:3.10"
)

// Bounds of the scripted steps, generous for a loaded two-core machine.
const (
	// podRunningTimeout bounds the pod's way to Running in the cloud, also
	// after the recovery, when the kubelet retries failed volume mounts with
	// a growing backoff.
	podRunningTimeout = 3 * time.Minute
	// linkTimeout bounds the wait for apiserver-lite to notice the cloud
	// going away or coming back.
	linkTimeout = time.Minute
	// writeRetryTimeout bounds retries of the first write after the
	// recovery, which the restarted cloud may refuse while its authorizer
	// warms up.
	writeRetryTimeout = 30 * time.Second
	// pollInterval is how often the script re-checks a condition.
	pollInterval = time.Second
	// probeTimeout bounds one plain HTTP request to the edge.
	probeTimeout = 5 * time.Second
)

// mergePatch is the content type of a JSON merge patch.
const mergePatch = "application/merge-patch+json"

// getPods lists the node's pods, which the edge holds, with their phase
// and node; a full object listing, since the edge's table has only name
// and age columns.
func (d *demo) getPods() []string {
	return []string{"get", "pods", "-A", "--field-selector", "spec.nodeName=" + d.c.NodeName,
		"-o", "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,PHASE:.status.phase,NODE:.spec.nodeName,RV:.metadata.resourceVersion"}
}

// demo is one run of the scripted walk-through. Every method fails the run
// through r on error.
type demo struct {
	r   *runner
	ctx context.Context
	out io.Writer
	c   *framework.Cluster
}

// step prints a heading for what comes next.
func (d *demo) step(format string, args ...any) {
	fmt.Fprintf(d.out, "\n==> "+format+"\n", args...)
}

// setUp starts the cloud, apiserver-lite and the hollow kubelet, and runs
// the demo pod until the cloud reports it Running.
func (d *demo) setUp() {
	d.step("Starting a throwaway cloud: etcd and kube-apiserver on loopback")
	d.c = framework.New(d.r, framework.Options{Namespaces: []string{demoNamespace}, NodeCredentials: true})
	d.step("Starting apiserver-lite for node %s on the node's own certificate (node scope); "+
		"it lists and watches what the Node authorizer lets the node read", d.c.NodeName)
	d.c.StartEdge()
	d.step("Starting a hollow kubelet (kubemark) whose only API server is apiserver-lite's HTTPS door, on its own certificate")
	d.c.StartKubemark()
	d.c.WaitNodeReady()
	fmt.Fprintf(d.out, "node %s is Ready in the cloud\n", d.c.NodeName)
	d.step("Creating ConfigMap %s/%s and pod %s/%s (bound to %s) in the cloud",
		demoNamespace, demoConfigMap, demoNamespace, demoPod, d.c.NodeName)
	d.createPod()
	d.waitPodRunning(time.Time{})
}

// printCommands prints how to reach the edge and the cloud with the built
// kubectl.
func (d *demo) printCommands() {
	c, kubectl := d.c, d.c.Bins.Kubectl
	edge := kubectl + " --kubeconfig " + c.KubeletKubeconfig
	fmt.Fprintf(d.out, `
-------------------------------------------------------------------------------
cloud (kube-apiserver):  %s
edge  (apiserver-lite):  %s   node %s
state and logs:          %s (removed on exit)

Try the edge as the node (its client certificate, the daemon's CA). It serves
reads from its local state and proxies the node's writes to the cloud:
  %s get pods -A --field-selector spec.nodeName=%s
  %s get pod -n %s %s -o yaml
  %s get configmaps -n %s -w
  %s get --raw '/readyz?verbose'
  %s annotate node %s mine=hello --overwrite
The cloud, as its admin:
  %s --kubeconfig %s get pods -A
-------------------------------------------------------------------------------
`, c.CloudURL, c.DoorURL, c.NodeName, c.Dir,
		edge, c.NodeName, edge, demoNamespace, demoPod, edge, demoNamespace, edge, edge, c.NodeName,
		kubectl, c.AdminKubeconfig)
}

// script walks through an outage, a reboot while offline and the recovery.
func (d *demo) script() {
	d.step("1. Cloud up: the edge serves the kubelet's view")
	d.showLink()
	d.kubectlEdge(d.getPods()...)

	d.step("2. Cloud outage: kube-apiserver is stopped")
	d.c.StopCloud()
	d.waitLink("disconnected")
	d.kubectlEdge(d.getPods()...)
	d.kubectlEdge("get", "node", d.c.NodeName)
	fmt.Fprintln(d.out, "\nWrites need the cloud. A raw PATCH through the edge:")
	d.showRawWrite()
	fmt.Fprintln(d.out, "\nkubectl reads the node from the edge, then its PATCH gets 503; it honours Retry-After and retries for about 10 s:")
	d.kubectlEdge("annotate", "node", d.c.NodeName, "demo-written=offline", "--overwrite")

	d.step("3. Edge node reboot while offline: apiserver-lite and the kubelet restart")
	if err := d.c.KubemarkProcess().Kill(); err != nil {
		d.r.Fatalf("kill kubemark: %v", err)
	}
	d.c.KillEdge()
	rebooted := time.Now()
	d.c.StartEdge()
	d.c.StartKubemark()
	fmt.Fprintln(d.out, "apiserver-lite is ready again, from its local SQLite state alone:")
	d.showLink()
	d.kubectlEdge(d.getPods()...)

	d.step("4. Cloud back: kube-apiserver restarts on the same etcd")
	d.c.StartCloud()
	d.waitLink("connected")
	d.retryKubectlEdge("annotate", "node", d.c.NodeName, "demo-written=after-recovery", "--overwrite")
	fmt.Fprintln(d.out, "\nThe kubelet reports again; waiting for the pod to run in the cloud...")
	d.waitPodRunning(rebooted)
	d.kubectlEdge(d.getPods()...)
	d.kubectlEdge("get", "node", d.c.NodeName, "-o", "jsonpath={.metadata.annotations.demo-written}{\"\\n\"}")
}

// createPod creates the demo ConfigMap and a pod bound to the edge node
// that reads it as an env var and a volume.
func (d *demo) createPod() {
	core := d.c.Admin.CoreV1()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: demoConfigMap},
		Data:       map[string]string{"greeting": "hello from the cloud"},
	}
	if _, err := core.ConfigMaps(demoNamespace).Create(d.ctx, cm, metav1.CreateOptions{}); err != nil {
		d.r.Fatalf("create configmap: %v", err)
	}
	ref := corev1.LocalObjectReference{Name: demoConfigMap}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: demoPod},
		Spec: corev1.PodSpec{
			NodeName: d.c.NodeName,
			Containers: []corev1.Container{{
				Name: "hello", Image: demoImage,
				Env: []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref, Key: "greeting"},
				}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/hello"}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref},
			}}},
		},
	}
	if _, err := core.Pods(demoNamespace).Create(d.ctx, pod, metav1.CreateOptions{}); err != nil {
		d.r.Fatalf("create pod: %v", err)
	}
}

// waitPodRunning waits until the cloud reports the demo pod Running with a
// container started at or after since.
func (d *demo) waitPodRunning(since time.Time) {
	var last string
	d.poll(podRunningTimeout, "pod Running in the cloud", func() error {
		pod, err := d.c.Admin.CoreV1().Pods(demoNamespace).Get(d.ctx, demoPod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = string(pod.Status.Phase)
		if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != 1 {
			return fmt.Errorf("phase %s", last)
		}
		running := pod.Status.ContainerStatuses[0].State.Running
		if running == nil || running.StartedAt.Time.Before(since.Truncate(time.Second)) {
			return fmt.Errorf("container not started since %s", since.Format(time.TimeOnly))
		}
		return nil
	})
	fmt.Fprintf(d.out, "pod %s/%s is %s in the cloud\n", demoNamespace, demoPod, last)
}

// kubectlEdge runs kubectl against the edge and prints the command and
// what it answered, error or not.
func (d *demo) kubectlEdge(args ...string) {
	fmt.Fprintf(d.out, "\n$ kubectl %s   # through the edge\n", strings.Join(args, " "))
	out, err := d.c.KubectlDoor(args...)
	if d.ctx.Err() != nil {
		d.r.FailNow()
	}
	fmt.Fprint(d.out, out)
	if err != nil {
		_, stderr, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprint(d.out, stderr)
	}
}

// retryKubectlEdge runs a kubectl write through the edge until it succeeds
// and prints the final answer.
func (d *demo) retryKubectlEdge(args ...string) {
	fmt.Fprintf(d.out, "\n$ kubectl %s   # through the edge\n", strings.Join(args, " "))
	var out string
	d.poll(writeRetryTimeout, "kubectl "+strings.Join(args, " "), func() error {
		var err error
		out, err = d.c.KubectlDoor(args...)
		return err
	})
	fmt.Fprint(d.out, out)
}

// cloudLink returns the cloud-link line of the edge's /readyz?verbose.
func (d *demo) cloudLink() (string, error) {
	ctx, cancel := context.WithTimeout(d.ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.c.EdgeURL+"/readyz?verbose", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "cloud-link:") {
			return line, nil
		}
	}
	return "", fmt.Errorf("/readyz?verbose (%s) has no cloud-link line:\n%s", resp.Status, body)
}

// showLink prints the edge's readiness and cloud link.
func (d *demo) showLink() {
	line, err := d.cloudLink()
	if err != nil {
		d.r.Fatalf("%v", err)
	}
	fmt.Fprintf(d.out, "\n$ curl %s/readyz?verbose | grep cloud-link\n%s\n", d.c.EdgeURL, line)
}

// waitLink waits until the edge reports the cloud link in state and prints
// it.
func (d *demo) waitLink(state string) {
	d.poll(linkTimeout, "cloud-link "+state, func() error {
		line, err := d.cloudLink()
		if err == nil && !strings.HasPrefix(line, "cloud-link: "+state) {
			err = fmt.Errorf("%s", line)
		}
		return err
	})
	d.showLink()
}

// showRawWrite PATCHes the node through the edge and prints the status
// line, Retry-After header and body it answers.
func (d *demo) showRawWrite() {
	url := d.c.DoorURL + "/api/v1/nodes/" + d.c.NodeName
	body := `{"metadata":{"annotations":{"demo-written":"offline"}}}`
	fmt.Fprintf(d.out, "\n$ curl -i --cacert CA --cert NODE-CERT --key NODE-KEY -X PATCH -H 'Content-Type: %s' %s -d '%s'\n",
		mergePatch, url, body)
	client, err := rest.HTTPClientFor(d.c.KubeletConfig())
	if err != nil {
		d.r.Fatalf("%v", err)
	}
	ctx, cancel := context.WithTimeout(d.ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, url, strings.NewReader(body))
	if err != nil {
		d.r.Fatalf("%v", err)
	}
	req.Header.Set("Content-Type", mergePatch)
	resp, err := client.Do(req)
	if err != nil {
		d.r.Fatalf("PATCH %s: %v", url, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		d.r.Fatalf("PATCH %s: %v", url, err)
	}
	fmt.Fprintf(d.out, "%s %s\nRetry-After: %s\n\n%s\n", resp.Proto, resp.Status, resp.Header.Get("Retry-After"),
		strings.TrimSpace(string(answer)))
	if resp.StatusCode != http.StatusServiceUnavailable {
		d.r.Errorf("PATCH during the outage: got %s, want 503", resp.Status)
	}
}

// poll calls check every pollInterval until it succeeds, and fails the run
// after timeout or on interruption.
func (d *demo) poll(timeout time.Duration, what string, check func() error) {
	ctx, cancel := context.WithTimeout(d.ctx, timeout)
	defer cancel()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			d.r.Fatalf("wait for %s: %v (last: %v)", what, ctx.Err(), err)
		case <-time.After(pollInterval):
		}
	}
}
