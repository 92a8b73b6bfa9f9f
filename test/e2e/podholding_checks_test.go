//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// seriesPodHeld is the number of resources the edge holds for pods.
const seriesPodHeld = "apiserver_lite_pod_held_resources"

// The system components' users in the cloud, and /readyz names of
// resources they read, as GroupResource.String() spells them.
const (
	proxyHolder = systemNS + "/kube-proxy"
	dnsHolder   = systemNS + "/coredns"

	readyEndpointSlices = "endpointslices.discovery.k8s.io"
	readyServiceCIDRs   = "servicecidrs.networking.k8s.io"
	readyNamespaces     = "namespaces"
	readyServices       = "services"
)

// heldOnline is who holds what once both components synced: kube-proxy
// reads EndpointSlices and ServiceCIDRs, CoreDNS EndpointSlices and
// namespaces; services are the node's own and held for no pod.
var heldOnline = map[string][]string{
	readyEndpointSlices: {proxyHolder, dnsHolder},
	readyServiceCIDRs:   {proxyHolder},
	readyNamespaces:     {dnsHolder},
}

// checkOneCloudWatch counts the watches of resource that reached the cloud
// in [since, until) from the node or a service account, by the cloud's
// audit log, and wants exactly one.
func checkOneCloudWatch(t *testing.T, c *framework.Cluster, resource string, since, until time.Time) {
	t.Helper()
	fromEdgeNode := func(user string) bool {
		return user == c.EdgeUser() || strings.HasPrefix(user, "system:serviceaccount:")
	}
	var watches []string
	for _, e := range c.CloudRequests(fromEdgeNode, since, until) {
		if e.Verb == "watch" && e.Resource() == resource {
			watches = append(watches, e.User.Username+" "+e.RequestURI)
		}
	}
	if len(watches) != 1 {
		t.Errorf("cloud watches of %s while two components synced: got %d, want 1:\n%s",
			resource, len(watches), strings.Join(watches, "\n"))
	}
}

// checkHeldOnline wants /readyz?verbose to name the holders of each
// resource of heldOnline and none for services (the node's own set may
// have no such line at all), the held count to match, and the fixture's
// markers on disk.
func checkHeldOnline(t *testing.T, c *framework.Cluster) {
	t.Helper()
	body := readyzVerbose(t, c)
	for resource, holders := range heldOnline {
		line := readyzLine(body, resource)
		for _, holder := range holders {
			if !strings.Contains(line, "held for") || !strings.Contains(line, holder) {
				t.Errorf("/readyz?verbose for %s: got %q, want it held for %s", resource, line, holder)
			}
		}
	}
	if line := readyzLine(body, readyServices); strings.Contains(line, "held for") {
		t.Errorf("/readyz?verbose for services, the node's own: got %q, want them held for no pod", line)
	}
	if got, ok := metricValue(t, c, seriesPodHeld); !ok || got != float64(len(heldOnline)) {
		t.Errorf("%s: got %v (present %v), want %d", seriesPodHeld, got, ok, len(heldOnline))
	}
	for _, marker := range []string{sliceMarker, cidrMarker} {
		if hits := filesContaining(t, dataDir(c), []byte(marker)); len(hits) == 0 {
			t.Errorf("marker %s in no file under the data dir, want the held object stored", marker)
		}
	}
}

// checkTenantRefused wants 403 for a tenant without RBAC listing and
// watching the held EndpointSlices, cluster-wide and in heldNS.
func checkTenantRefused(t *testing.T, c *framework.Cluster, token string) {
	t.Helper()
	for _, path := range []string{
		"/apis/discovery.k8s.io/v1/endpointslices",
		"/apis/discovery.k8s.io/v1/namespaces/" + heldNS + "/endpointslices",
		"/apis/discovery.k8s.io/v1/namespaces/" + heldNS + "/endpointslices?watch=1&timeoutSeconds=1",
	} {
		code, body := doorDo(t, doorClient(c), "GET", c.DoorURL+path, token, nil)
		if code != http.StatusForbidden || strings.Contains(body, sliceMarker) {
			t.Errorf("tenant GET %s: got %d %.300s, want 403", path, code, body)
		}
	}
}

// checkProxyPodDeleted deletes the kube-proxy pod and stops its process:
// within holdingDropDeadline the edge holds one resource fewer, no longer
// holds ServiceCIDRs, and their marker leaves the data dir, while
// EndpointSlices stay held for CoreDNS, which still resolves.
func checkProxyPodDeleted(t *testing.T, c *framework.Cluster, f heldFixture, dns string) {
	t.Helper()
	ctx := t.Context()
	waitCloudLink(t, c, "connected")
	before, ok := metricValue(t, c, seriesPodHeld)
	if !ok {
		t.Errorf("/metrics has no %s before the pod's deletion", seriesPodHeld)
	}
	zero := int64(0)
	if err := c.Admin.CoreV1().Pods(systemNS).Delete(ctx, f.proxyPod, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete the kube-proxy pod: %v", err)
	}
	start := time.Now()
	if err := c.HollowProxyProcess().Kill(); err != nil {
		t.Fatalf("stop kube-proxy: %v", err)
	}
	_, err := eventually(ctx, holdingDropDeadline, func() (string, error) {
		if got, _ := metricValue(t, c, seriesPodHeld); got != before-1 {
			return "", fmt.Errorf("%s: got %v, want %v", seriesPodHeld, got, before-1)
		}
		if line := readyzLine(readyzVerbose(t, c), readyServiceCIDRs); strings.Contains(line, "held for") {
			return "", fmt.Errorf("/readyz?verbose still says %q", line)
		}
		if hits := filesContaining(t, dataDir(c), []byte(cidrMarker)); len(hits) > 0 {
			return "", fmt.Errorf("the ServiceCIDR's marker is still in %v", hits)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("%d s after the kube-proxy pod was deleted: %v", int(time.Since(start).Seconds()), err)
	}
	line := readyzLine(readyzVerbose(t, c), readyEndpointSlices)
	if !strings.Contains(line, "held for") || !strings.Contains(line, dnsHolder) || strings.Contains(line, proxyHolder) {
		t.Errorf("/readyz?verbose for EndpointSlices after the kube-proxy pod left: got %q, want held for %s alone", line, dnsHolder)
	}
	if hits := filesContaining(t, dataDir(c), []byte(sliceMarker)); len(hits) == 0 {
		t.Errorf("the EndpointSlice CoreDNS still reads left the data dir, want it kept")
	}
	waitResolves(t, c, dns, f)
}

// readyzVerbose returns the edge's /readyz?verbose text, ready or not.
func readyzVerbose(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	_, body := edgeRawRequest(t, http.MethodGet, c.EdgeURL+"/readyz?verbose", "", "")
	return string(body)
}

// readyzLine returns the /readyz?verbose line of resource's cache, or "".
func readyzLine(body, resource string) string {
	for line := range strings.Lines(body) {
		if _, rest, ok := strings.Cut(line, "cache:"); ok && strings.HasPrefix(rest, resource+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
