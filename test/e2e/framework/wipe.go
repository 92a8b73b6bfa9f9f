//go:build e2e

package framework

import (
	"net/http"
	"os"
	"path/filepath"
)

// WipeCloud rebuilds the cloud on an empty etcd, as an operator does when
// restoring a control plane from an old backup or from scratch:
// kube-apiserver and etcd are killed, etcd's data is removed, both start
// again on the same ports, and the RBAC and namespaces of New are applied
// again. Resource versions start over, below what clients have seen, and
// objects created again get new UIDs.
func (c *Cluster) WipeCloud() {
	c.t.Helper()
	c.StopCloud()
	if err := c.etcd.Kill(); err != nil {
		c.t.Fatalf("stop etcd: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(c.Dir, "etcd")); err != nil {
		c.t.Fatalf("wipe etcd: %v", err)
	}
	c.startProcess(c.etcd)
	check := httpOK(&http.Client{}, c.etcdURL+"/health")
	if err := waitFor(c.t.Context(), c.etcd, "etcd /health", etcdReadyTimeout, check); err != nil {
		c.t.Fatalf("%v\n%s", err, c.etcd.Tail(logTailLines))
	}
	c.StartCloud()
	c.applyRBAC()
	for _, ns := range append([]string{"default"}, c.opts.Namespaces...) {
		c.CreateNamespace(ns)
	}
}
