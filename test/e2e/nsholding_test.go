//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// nsCapObjects is the per-namespace cap of the scenario: the operator's
// namespace fits under it, the tenant's does not.
const nsCapObjects = 10

// The operator's and the tenant's objects (each namespace also holds
// kube-root-ca.crt).
const (
	operatorConfigMaps = 3
	tenantConfigMaps   = nsCapObjects + 2
)

// crdGoneTimeout bounds how long a holding takes to stop once its CRD is
// deleted: the cloud ends its watch, the re-watch gets 404.
const crdGoneTimeout = 30 * time.Second

// readyzNSCheck prefixes the /readyz?verbose note of a namespaced holding,
// "held-in-namespace:<ns>/<group>/<version>/<resource>".
const readyzNSCheck = "held-in-namespace:"

// TestNamespacedHoldings runs an operator's client-go informers on its
// namespace's ConfigMaps and on a CRD's custom resources, on a token bound
// to its pod on the node with a namespaced Role, through the daemon's TLS
// door, with the daemon on the node's credentials against a Node,RBAC +
// NodeRestriction cloud: both sync online, held in that namespace; a
// tenant filling its namespace past the cap is read through the cloud
// while the operator's holdings are untouched; after the cloud stops and
// the daemon and the informers restart, both sync again with the same
// objects from the edge alone.
func TestNamespacedHoldings(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, Namespaces: []string{operatorNS, tenantNS},
		EdgeArgs: []string{"--pod-identity-namespace-max-objects", fmt.Sprint(nsCapObjects)}})
	createNode(t, c)
	createWidgetsCRD(t, c)
	createConfigMaps(t, c, operatorNS, "op", operatorConfigMaps)
	createWidget(t, c, operatorNS, "small")
	createWidget(t, c, operatorNS, "large")
	createConfigMaps(t, c, tenantNS, "fill", tenantConfigMaps)
	opToken := namespacedReaderToken(t, c, operatorNS, "operator")
	tenantToken := namespacedReaderToken(t, c, tenantNS, "tenant")
	c.StartEdge()
	var online operatorView

	t.Run("operator online", func(t *testing.T) {
		online = syncOperator(t, c, operatorNS, opToken)
		if len(online.configMaps) != operatorConfigMaps+1 || !slices.Equal(online.widgets, []string{"large", "small"}) {
			t.Fatalf("got %+v, want %d configmaps and widgets large, small", online, operatorConfigMaps+1)
		}
		checkNSHeld(t, c, operatorNS, "v1/configmaps", operatorNS+"/operator")
		checkNSHeld(t, c, operatorNS, widgetsGVR.Group+"/v1/widgets", operatorNS+"/operator")
		checkNodeNotWidened(t, c)
	})
	t.Run("tenant past its cap", func(t *testing.T) {
		tenant := syncOperator(t, c, tenantNS, tenantToken)
		if len(tenant.configMaps) != tenantConfigMaps+1 {
			t.Errorf("tenant's informer: got %d configmaps, want all %d read through the cloud", len(tenant.configMaps), tenantConfigMaps+1)
		}
		if line := readyzNSLine(readyzVerbose(t, c), tenantNS+"/v1/configmaps"); line != "" && !strings.Contains(line, "stopped") {
			t.Errorf("tenant's configmaps: got %q, want them not held", line)
		}
		if n := capRefusals(t, c, tenantNS); n < 1 {
			t.Errorf("apiserver_lite_pod_holding_cap_refusals_total for %s: got %v, want at least 1", tenantNS, n)
		}
		checkNSHeld(t, c, operatorNS, "v1/configmaps", operatorNS+"/operator")
		checkNSHeld(t, c, operatorNS, widgetsGVR.Group+"/v1/widgets", operatorNS+"/operator")
	})
	t.Run("reboot with the cloud stopped", func(t *testing.T) {
		c.StopCloud()
		c.KillEdge()
		c.StartEdge()
		got := syncOperator(t, c, operatorNS, opToken)
		if !slices.Equal(got.configMaps, online.configMaps) || !slices.Equal(got.widgets, online.widgets) {
			t.Errorf("offline: got %+v, want the online objects %+v", got, online)
		}
	})
	c.StartCloud()
	t.Run("CRD deleted", func(t *testing.T) { checkCRDDeletedStops(t, c, opToken) })
}

// checkNodeNotWidened wants the node's own identity, at the same door,
// still refused a list of the operator's ConfigMaps (the Node authorizer
// allows only referenced ones): a namespaced holding never widens the
// node's view.
func checkNodeNotWidened(t *testing.T, c *framework.Cluster) {
	t.Helper()
	_, err := kubernetes.NewForConfigOrDie(c.KubeletConfig()).CoreV1().ConfigMaps(operatorNS).List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the node's list of %s's configmaps: got %v, want 403", operatorNS, err)
	}
}

// checkCRDDeletedStops deletes the widgets CRD with the cloud up and wants
// the holding of widgets stopped within crdGoneTimeout and the operator's
// list answered by the cloud: 404.
func checkCRDDeletedStops(t *testing.T, c *framework.Cluster, token string) {
	t.Helper()
	name := widgetsGVR.Resource + "." + widgetsGVR.Group
	if err := dynamic.NewForConfigOrDie(c.AdminConfig).Resource(crdGVR).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CRD: %v", err)
	}
	cfg := c.DoorConfig()
	cfg.BearerToken = token
	widgets := dynamic.NewForConfigOrDie(cfg).Resource(widgetsGVR).Namespace(operatorNS)
	_, err := eventually(t.Context(), crdGoneTimeout, func() (string, error) {
		line := readyzNSLine(readyzVerbose(t, c), operatorNS+"/"+widgetsGVR.Group+"/v1/widgets")
		_, lerr := widgets.List(t.Context(), metav1.ListOptions{})
		if (line != "" && !strings.Contains(line, "stopped")) || !apierrors.IsNotFound(lerr) {
			return "", fmt.Errorf("holding %q, the operator's list got %v; want the holding stopped or dropped and the cloud's 404", line, lerr)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("after the CRD's deletion: %v\n%s", err, c.EdgeProcess().Tail(20))
	}
}

// operatorView is what an operator's informers hold: names, sorted.
type operatorView struct {
	configMaps, widgets []string
}

// syncOperator starts a typed ConfigMaps informer and a dynamic widgets
// informer in ns through the daemon's TLS door on token, waits until both
// synced, stops them and returns what they held.
func syncOperator(t *testing.T, c *framework.Cluster, ns, token string) operatorView {
	t.Helper()
	op := startOperator(c, ns, token)
	defer op.stop()
	return op.waitSynced(t, c)
}

// operatorInformers are an operator's running informers in one namespace.
type operatorInformers struct {
	ns string
	// deadline is componentSyncTimeout after the start.
	deadline time.Time
	cancel   context.CancelFunc
	typed    informers.SharedInformerFactory
	dyn      dynamicinformer.DynamicSharedInformerFactory
	cms      cache.SharedIndexInformer
	widgets  cache.SharedIndexInformer
}

// startOperator starts a typed ConfigMaps informer and a dynamic widgets
// informer in ns through the daemon's TLS door on token; they run until
// stop.
func startOperator(c *framework.Cluster, ns, token string) *operatorInformers {
	cfg := c.DoorConfig()
	cfg.BearerToken = token
	ctx, cancel := context.WithCancel(context.Background())
	op := &operatorInformers{ns: ns, deadline: time.Now().Add(componentSyncTimeout), cancel: cancel,
		typed: informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace(ns)),
		dyn:   dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(cfg), 0, ns, nil)}
	op.cms = op.typed.Core().V1().ConfigMaps().Informer()
	op.widgets = op.dyn.ForResource(widgetsGVR).Informer()
	op.typed.Start(ctx.Done())
	op.dyn.Start(ctx.Done())
	return op
}

// waitSynced waits until both informers synced, within
// componentSyncTimeout of their start, and returns what they hold.
func (op *operatorInformers) waitSynced(t *testing.T, c *framework.Cluster) operatorView {
	t.Helper()
	ctx, cancel := context.WithDeadline(t.Context(), op.deadline)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), op.cms.HasSynced, op.widgets.HasSynced) {
		t.Fatalf("informers in %s did not sync within %s\n%s", op.ns, componentSyncTimeout, tail(c.EdgeProcess().Tail(40), 40))
	}
	return operatorView{configMaps: storeNames(op.cms.GetStore()), widgets: storeNames(op.widgets.GetStore())}
}

// stop stops the informers and waits for them.
func (op *operatorInformers) stop() {
	op.cancel()
	op.typed.Shutdown()
	op.dyn.Shutdown()
}

// storeNames are the names of an informer store's objects, sorted.
func storeNames(s cache.Store) []string {
	var out []string
	for _, k := range s.ListKeys() {
		_, name, _ := cache.SplitMetaNamespaceKey(k)
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// checkNSHeld wants /readyz?verbose to say resource (group/version/
// resource) is held in ns for holder, within a few seconds.
func checkNSHeld(t *testing.T, c *framework.Cluster, ns, resource, holder string) {
	t.Helper()
	_, err := eventually(t.Context(), 10*time.Second, func() (string, error) {
		line := readyzNSLine(readyzVerbose(t, c), ns+"/"+resource)
		if !strings.Contains(line, "held for "+holder) || !strings.Contains(line, "syncing as pod") {
			return "", fmt.Errorf("got %q, want it held for %s", line, holder)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("/readyz?verbose for %s in %s: %v", resource, ns, err)
	}
}

// readyzNSLine is the /readyz?verbose note of the holding ns/resource, or
// "".
func readyzNSLine(body, nsResource string) string {
	for line := range strings.Lines(body) {
		if _, rest, ok := strings.Cut(line, readyzNSCheck); ok && strings.HasPrefix(rest, nsResource+":") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// capRefusals sums the cap refusals of ns in /metrics.
func capRefusals(t *testing.T, c *framework.Cluster, ns string) float64 {
	t.Helper()
	var n float64
	for line := range strings.Lines(edgeGetText(t, c.EdgeURL+"/metrics")) {
		if strings.HasPrefix(line, "apiserver_lite_pod_holding_cap_refusals_total{") && strings.Contains(line, `namespace="`+ns+`"`) {
			var v float64
			if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
				n += v
			}
		}
	}
	return n
}
