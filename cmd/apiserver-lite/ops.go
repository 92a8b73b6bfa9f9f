package main

import (
	"path/filepath"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/utils/clock"
)

// newOps returns the daemon's operational view: metrics, health, status
// and the systemd status line.
func newOps(cfg config, res []cloudsync.Resource, caches []*versioncache.Cache, conns *link.Conns, up func() bool, store *metastore.Store, st storeState) *operations.View {
	return operations.New(operations.Config{Node: cfg.NodeName, Resources: res, Caches: caches, Link: up, CloudWatches: conns.OpenWatches, Store: store,
		StorePath: filepath.Join(cfg.DataDir, dbFile), Clock: clock.RealClock{}, MaxStaleness: cfg.MaxStaleness, Recovery: st.recovery, Sealed: st.sealer != nil})
}
