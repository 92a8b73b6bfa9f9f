//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

const (
	// linkCutOutage is how long the link stays cut: longer than the old
	// 30 s backoff cap, so a per-resource backoff would show.
	linkCutOutage = 35 * time.Second
	// linkRecoveryBound is the contract's 10 s catch-up after the link
	// returns, with 2x headroom.
	linkRecoveryBound = 20 * time.Second
	// blackHoleOutage is how long the link drops packets silently.
	blackHoleOutage = 10 * time.Second
	// longBlackHoleOutage outlasts the default watch-progress-timeout
	// (15 s) and the HTTP/2 health check (6 s idle + 4 s PING timeout).
	longBlackHoleOutage = 25 * time.Second
	// blackHoleDetectBound is the contract's half-open detection: the
	// HTTP/2 PINGs close the silent connections within 10 s (6 s idle, 4 s
	// PING timeout), and the probe that follows times out within 3 s.
	blackHoleDetectBound = 15 * time.Second
	// blackHoleRecoveryBound is the contract's 15 s catch-up after a
	// black hole, with 2x headroom.
	blackHoleRecoveryBound = 30 * time.Second
	// catchUpPoll is how often the catch-up is checked while measuring.
	catchUpPoll = 100 * time.Millisecond
)

// TestLinkCutRecovery cuts the edge's link with RSTs for longer than the
// old backoff cap, changes three synced resources in the cloud meanwhile,
// and measures how soon after the link returns the edge serves all of it.
func TestLinkCutRecovery(t *testing.T) {
	const ns = "linkcut"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}, EdgeLink: true})
	c.StartEdge()
	ctx := t.Context()
	createDurConfigMap(ctx, t, c.Admin.CoreV1().ConfigMaps(ns), "before", "0")
	mustCatchUp(t, c, ns, edgeSyncTimeout)

	cut := time.Now()
	c.CutLink()
	detected := waitCloudLink(t, c, "disconnected").Sub(cut)
	changeSyncedKinds(t, c, ns, "cut")
	time.Sleep(time.Until(cut.Add(linkCutOutage))) // the outage's length is the scenario
	c.RestoreLink()
	recovery := mustCatchUp(t, c, ns, linkRecoveryBound)
	t.Logf("link cut: outage %s, detected after %s, caught up %s after the link returned",
		linkCutOutage, detected.Round(time.Millisecond), recovery.Round(time.Millisecond))
}

// TestLinkBlackHoleRecovery makes the link drop packets silently, with a
// cloud change meanwhile, and measures detection and catch-up: for 10 s,
// then for longer than watch-progress-timeout, when the HTTP/2 PINGs and
// the prober must have ended every cloud watch.
func TestLinkBlackHoleRecovery(t *testing.T) {
	const ns = "blackhole"
	c := framework.New(t, framework.Options{Namespaces: []string{ns}, EdgeLink: true})
	c.StartEdge()
	ctx := t.Context()
	createDurConfigMap(ctx, t, c.Admin.CoreV1().ConfigMaps(ns), "before", "0")
	mustCatchUp(t, c, ns, edgeSyncTimeout)
	for i, outage := range []time.Duration{blackHoleOutage, longBlackHoleOutage} {
		waitCloudLink(t, c, "connected")
		start := time.Now()
		c.BlackHoleLink()
		detected := waitCloudLink(t, c, "disconnected").Sub(start)
		if detected > blackHoleDetectBound {
			t.Errorf("black hole reported after %s, want within %s", detected, blackHoleDetectBound)
		}
		changeSyncedKinds(t, c, ns, fmt.Sprint("hole", i))
		time.Sleep(time.Until(start.Add(outage)))
		c.RestoreLink()
		recovery := mustCatchUp(t, c, ns, blackHoleRecoveryBound)
		t.Logf("black hole: outage %s, detected after %s, caught up %s after the link returned",
			outage, detected.Round(time.Millisecond), recovery.Round(time.Millisecond))
	}
}

// changeSyncedKinds changes three synced resources in the cloud: a
// configmap and a service in ns, and ns's labels.
func changeSyncedKinds(t *testing.T, c *framework.Cluster, ns, tag string) {
	t.Helper()
	ctx := t.Context()
	core := c.Admin.CoreV1()
	createDurConfigMap(ctx, t, core.ConfigMaps(ns), "during-"+tag, "1")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-" + tag}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := core.Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{"fault":%q}}}`, tag)
	if _, err := core.Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("label namespace: %v", err)
	}
}

// mustCatchUp waits until the edge serves the cloud's configmaps and
// services of ns and ns itself, at the cloud's resource versions, and
// returns how long that took; it fails the test after bound.
func mustCatchUp(t *testing.T, c *framework.Cluster, ns string, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	edge := c.EdgeClient()
	var last error
	for time.Since(start) < bound {
		if last = caughtUp(t.Context(), c, edge.CoreV1(), ns); last == nil {
			return time.Since(start)
		}
		time.Sleep(catchUpPoll)
	}
	t.Fatalf("edge not caught up with the cloud within %s: %v", bound, last)
	return 0
}

// caughtUp compares the edge's and the cloud's state of ns.
func caughtUp(ctx context.Context, c *framework.Cluster, edge typedcorev1.CoreV1Interface, ns string) error {
	cloud := c.Admin.CoreV1()
	cloudCMs, err := cloud.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	edgeCMs, err := edge.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if want, got := durConfigMapStates(cloudCMs.Items), durConfigMapStates(edgeCMs.Items); !maps.Equal(got, want) {
		return fmt.Errorf("configmaps: edge %v, cloud %v", got, want)
	}
	cloudSvcs, err := cloud.Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	edgeSvcs, err := edge.Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if want, got := serviceRVs(cloudSvcs.Items), serviceRVs(edgeSvcs.Items); !maps.Equal(got, want) {
		return fmt.Errorf("services: edge %v, cloud %v", got, want)
	}
	cloudNS, err := cloud.Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return err
	}
	edgeNS, err := edge.Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if edgeNS.ResourceVersion != cloudNS.ResourceVersion {
		return fmt.Errorf("namespace: edge RV %s, cloud RV %s", edgeNS.ResourceVersion, cloudNS.ResourceVersion)
	}
	return nil
}

func serviceRVs(items []corev1.Service) map[string]string {
	out := make(map[string]string, len(items))
	for _, s := range items {
		out[s.Name] = s.ResourceVersion
	}
	return out
}
