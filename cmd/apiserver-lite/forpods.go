package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// forPodsConfig are the settings of what is held for the node's pods'
// own identities. Keys in the config file are the flag names.
type forPodsConfig struct {
	// PodIdentityResources may be held for pods on this node that read
	// them on their own service accounts (group/version/resource).
	PodIdentityResources []string `mapstructure:"pod-identity-resources"`
	// PodIdentityMaxResources bounds how many are held at once.
	PodIdentityMaxResources int `mapstructure:"pod-identity-max-resources"`
	// PodIdentityOwners are the service accounts (namespace/name, or
	// namespace/*) whose pods may own a holding and be its sync identity.
	PodIdentityOwners []string `mapstructure:"pod-identity-owners"`
}

func addForPodsFlags(fs *pflag.FlagSet) {
	fs.StringSlice("pod-identity-resources", holding.DefaultPodIdentityResources,
		"resources (group/version/resource, v1/resource for the core group) held for pods on this node that list or watch them "+
			"on their own service accounts, such as kube-proxy and CoreDNS; empty holds none")
	fs.Int("pod-identity-max-resources", holding.DefaultMaxPodHeldResources,
		"resources held for pods at once; reads of others stay the cloud's")
	fs.StringSlice("pod-identity-owners", forpods.DefaultOwners,
		"service accounts (namespace/name, or namespace/* for all of a namespace) whose pods may make the node hold a resource "+
			"and be its sync identity; other pods read held resources, authorized per caller, but never start or sync one")
}

func (c forPodsConfig) validate() error {
	if c.PodIdentityMaxResources < 0 {
		return fmt.Errorf("pod-identity-max-resources must not be negative, got %d", c.PodIdentityMaxResources)
	}
	for _, s := range c.PodIdentityResources {
		if _, err := holding.ParseGVR(s); err != nil {
			return fmt.Errorf("pod-identity-resources: %w", err)
		}
	}
	_, err := forpods.ParseAllowed(c.PodIdentityOwners)
	return err
}

// holdingsDeps are what the holdings for pods are wired to.
type holdingsDeps struct {
	cloud  *rest.Config
	conns  *link.Conns
	cl     cloudClients
	store  *metastore.Store
	link   *link.Link
	obs    *operations.Observer
	log    *slog.Logger
	res    []cloudsync.Resource
	caches []*versioncache.Cache
	// pool reads pool-wide resources from the pool's leader, counting
	// their bytes in poolStats; nil without a pool.
	pool      *pool.Follower
	poolStats *pool.Stats
}

// newHoldings wires the holdings for pods of res's ForPods resources; nil
// when there are none or the node's pods are not synced.
func newHoldings(cfg config, d holdingsDeps) (*forpods.Holdings, error) {
	held, pods := forpods.HeldOf(d.res, d.caches)
	if len(held) == 0 {
		return nil, nil
	}
	mint, err := forpods.NodeMinter(d.cloud)
	if err != nil {
		return nil, err
	}
	owners, err := forpods.ParseAllowed(cfg.PodIdentityOwners) // validated
	if err != nil {
		return nil, err
	}
	return forpods.New(forpods.Config{Resources: held, Max: cfg.PodIdentityMaxResources, Pods: pods, Owners: owners,
		PodPresent: holding.HeldPod([]*versioncache.Cache{pods}), Mint: mint, Store: d.store, Connected: d.link.Connected, Logger: d.log,
		Sync: forpods.CloudSync(poolSyncDeps(forpods.SyncDeps{Cloud: d.cloud, Conns: d.conns, Discovery: d.cl.disc,
			Store: operations.ObservedStore{Store: d.store, Observer: d.obs}, Link: d.link, Observer: d.obs, Logger: d.log},
			d.pool, d.poolStats)),
	}), nil
}

// holdingsOf is h as the doors' interface: nil, not a typed nil, when h is.
func holdingsOf(h *forpods.Holdings) door.Holdings {
	if h == nil {
		return nil
	}
	return h
}

// runnerOf is h's Run, or nil.
func runnerOf(h *forpods.Holdings) func(context.Context) error {
	if h == nil {
		return nil
	}
	return h.Run
}

// currentOf is h's Current, or nil.
func currentOf(h *forpods.Holdings) func(schema.GroupVersionResource) bool {
	if h == nil {
		return nil
	}
	return h.Current
}
