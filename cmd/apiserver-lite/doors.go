package main

import (
	"net/http"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// doorSockets are the doors' addresses by socket name ("" for a door
// that is off).
func (c config) doorSockets() map[string]string {
	return map[string]string{door.SocketKubelet: c.ListenAddress, door.SocketPods: c.SecureListenAddress,
		door.SocketInsecure: c.InsecureListenAddress}
}

// openDoors opens the configured doors in front of api (door.OpenSet).
func (w *wiring) openDoors(api http.Handler, served []*versioncache.Cache) (*door.Set, error) {
	c := w.cfg
	return door.OpenSet(door.SetConfig{NodeName: c.NodeName, ListenAddress: c.ListenAddress,
		SecureListenAddress: c.SecureListenAddress, InsecureListenAddress: c.InsecureListenAddress,
		TLS:       door.SetTLS{CertFile: c.TLSCertFile, KeyFile: c.TLSPrivateKeyFile, ClientCAFile: c.ClientCAFile, DataDir: c.DataDir},
		Bootstrap: c.TLSBootstrap, BootstrapIPs: c.bootstrapIPs(), BootstrapLifetime: c.TLSBootstrapLifetime,
		PoolAddress: c.poolDoorAddress(), PoolAudience: c.PoolAudience, Pool: forpods.PoolDoor(w.elect, w.res, w.held),
		Limits: c.limits(), OfflineGrace: c.OfflineAuthzGrace,
		ClusterScope: w.scope == holding.ScopeCluster, ImpersonateNode: w.scope == holding.ScopeCluster && c.ClusterScopeNodeWrites == nodeWritesAsNode,
		Handler:    func(name string) http.Handler { return w.ops.Handler(api, name) },
		AuthFailed: func(name string) func() { return func() { w.ops.Metrics().AuthFailed(name) } },
		Cloud:      w.cloud, Pods: holding.HeldPod(served), Held: forpods.DoorHeld(offline.HeldResources(w.res), w.nsHeld),
		Decisions: offline.MetaStore{Store: w.store}, Connected: w.link.Connected, KeySealer: w.st.sealer,
		Holdings: forpods.DoorHoldings(w.held, w.nsHeld), Local: localVerifier(w.verifier), Sockets: w.st.sockets, Logger: w.log})
}

// poolDoorAddress is the pool door's address; "" without a pool.
func (c config) poolDoorAddress() string {
	if c.Pool == "" {
		return ""
	}
	return c.PoolListenAddress
}
