//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// componentSyncTimeout bounds how long a system component takes to sync
// its informers through the edge, online or after an offline reboot
// (issue: within 2 minutes).
const componentSyncTimeout = 2 * time.Minute

// holdingDropDeadline is how long the edge may keep holding a resource,
// and its bytes on disk, after the last pod whose identity needed it is
// deleted (issue: within a minute).
const holdingDropDeadline = time.Minute

// auditSettle is how long the test waits after both components synced
// before it reads the cloud's audit log, so that a second watch the
// components' informers would cause has started.
const auditSettle = 5 * time.Second

// The hollow kube-proxy's controllers whose informers must sync.
var proxyControllers = []string{"service config", "endpoint slice config", "serviceCIDR config"}

// TestSystemComponentsHeldForPods runs a real hollow kube-proxy (kubemark
// --morph proxy) and a real CoreDNS through apiserver-lite's authenticated
// door on their own pod-bound service-account tokens, with the daemon on
// the node's credentials against a Node,RBAC + NodeRestriction cloud. What
// they read beyond the node's own set (EndpointSlices, ServiceCIDRs,
// namespaces) is held for their pods: online both sync and resolve, two
// readers of EndpointSlices cost the cloud one watch, a tenant without
// RBAC gets 403, after a reboot with the cloud stopped both sync and
// resolve again from the edge alone, and deleting the kube-proxy pod drops
// what only it needed, from the data dir too.
func TestSystemComponentsHeldForPods(t *testing.T) {
	c := framework.New(t, framework.Options{NodeCredentials: true, AuditLog: true,
		Namespaces: []string{systemNS, heldNS}})
	f := createHeldFixture(t, c)
	c.StartEdge()
	proxyKubeconfig := c.WriteDoorKubeconfig("kube-proxy", f.proxyToken)
	dnsKubeconfig := c.WriteDoorKubeconfig("coredns", f.dnsToken)
	var dns string

	t.Run("online", func(t *testing.T) {
		start := time.Now()
		c.StartHollowProxy(proxyKubeconfig)
		t.Run("kube-proxy syncs", func(t *testing.T) { waitProxySynced(t, c, f) })
		dns = c.StartCoreDNS(dnsKubeconfig)
		t.Run("CoreDNS resolves", func(t *testing.T) { waitResolves(t, c, dns, f) })
		time.Sleep(auditSettle)
		t.Run("two components make one cloud watch", func(t *testing.T) {
			checkOneCloudWatch(t, c, "endpointslices", start, time.Now())
		})
		t.Run("held for the pods", func(t *testing.T) { checkHeldOnline(t, c) })
		t.Run("tenant gets 403", func(t *testing.T) { checkTenantRefused(t, c, f.tenantToken) })
	})
	t.Run("reboot with the cloud stopped", func(t *testing.T) {
		c.StopCloud()
		for _, p := range []*framework.Process{c.HollowProxyProcess(), c.CoreDNSProcess()} {
			if err := p.Kill(); err != nil {
				t.Fatalf("kill %s: %v", p.Name, err)
			}
		}
		c.KillEdge()
		c.StartEdge()
		c.StartHollowProxy(proxyKubeconfig)
		c.StartCoreDNS(dnsKubeconfig)
		t.Run("kube-proxy syncs", func(t *testing.T) { waitProxySynced(t, c, f) })
		t.Run("CoreDNS resolves", func(t *testing.T) { waitResolves(t, c, dns, f) })
		t.Run("tenant gets 403", func(t *testing.T) { checkTenantRefused(t, c, f.tenantToken) })
	})
	c.StartCloud()
	t.Run("kube-proxy pod deleted", func(t *testing.T) { checkProxyPodDeleted(t, c, f, dns) })
}

// waitProxySynced waits until the hollow kube-proxy's current run logs
// "Caches are synced" for each of proxyControllers and hands the fixture
// EndpointSlice to its proxier.
func waitProxySynced(t *testing.T, c *framework.Cluster, f heldFixture) {
	t.Helper()
	wants := make([]string, 0, len(proxyControllers)+1)
	for _, name := range proxyControllers {
		wants = append(wants, fmt.Sprintf(`"Caches are synced" controller=%q`, name))
	}
	wants = append(wants, fmt.Sprintf(`"Calling handler.OnEndpointSliceAdd" endpoints="%s/%s"`, heldNS, f.slice))
	_, err := eventually(t.Context(), componentSyncTimeout, func() (string, error) {
		log := c.HollowProxyLog()
		for _, want := range wants {
			if !strings.Contains(log, want) {
				return "", fmt.Errorf("kube-proxy has not logged %s", want)
			}
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("within %s: %v\n%s", componentSyncTimeout, err, tail(c.HollowProxyLog(), 40))
	}
}

// waitResolves waits until CoreDNS at dns answers the fixture service's
// name with its ClusterIP.
func waitResolves(t *testing.T, c *framework.Cluster, dns string, f heldFixture) {
	t.Helper()
	name := fmt.Sprintf("%s.%s.svc.cluster.local.", f.service, heldNS)
	_, err := eventually(t.Context(), componentSyncTimeout, func() (string, error) {
		addrs, err := framework.LookupA(t.Context(), dns, name)
		if err != nil {
			return "", err
		}
		if len(addrs) != 1 || addrs[0].String() != f.clusterIP {
			return "", fmt.Errorf("got %v, want [%s]", addrs, f.clusterIP)
		}
		return "", nil
	})
	if err != nil {
		t.Errorf("CoreDNS A %s within %s: %v\n%s", name, componentSyncTimeout, err,
			c.CoreDNSProcess().Tail(40))
	}
}
