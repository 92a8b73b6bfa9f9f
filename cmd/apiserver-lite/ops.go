package main

import (
	"context"
	"path/filepath"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/utils/clock"
)

// Door labels of the request metrics.
const (
	doorLoopback = "loopback" // the kubelet's authenticated door (listen-address)
	doorTLS      = "tls"      // the pods' authenticated door (secure-listen-address)
	doorInsecure = "insecure" // the plain-HTTP door (insecure-listen-address)
)

// newOps returns the daemon's operational view: metrics, health, status
// and the systemd status line.
func newOps(cfg config, res []cloudsync.Resource, caches []*versioncache.Cache, link func() bool, store *metastore.Store, st storeState) *operations.View {
	return operations.New(operations.Config{Node: cfg.NodeName, Resources: res, Caches: caches, Link: link, Store: store,
		StorePath: filepath.Join(cfg.DataDir, dbFile), Clock: clock.RealClock{}, MaxStaleness: cfg.MaxStaleness, Recovery: st.recovery, Sealed: st.sealer != nil})
}

// aliveProbe is the watchdog's liveness probe: a GET of /livez through
// the door the daemon can reach itself, or the liveness checks in process
// when there is none.
func aliveProbe(o *operations.View, door *selfDoor) func(context.Context) error {
	if door != nil {
		return operations.SelfProbe(door.addr, door.tls)
	}
	return o.Alive
}
