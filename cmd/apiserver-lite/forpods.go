package main

import (
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/spf13/pflag"
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

// holdingsConfig is what is held for the node's pods, from the
// pod-identity-* settings, on the node's clients; the cluster-wide
// holdings read pool-wide resources from the pool's leader.
func (w *wiring) holdingsConfig(cl cloudClients, obs *operations.Observer) (forpods.NodeConfig, error) {
	caps, err := w.cfg.caps()
	if err != nil {
		return forpods.NodeConfig{}, err
	}
	sync := forpods.SyncDeps{Cloud: w.cloud, Conns: w.conns, Discovery: cl.lookup,
		Store: operations.ObservedStore{Store: w.store, Observer: obs}, Link: w.link, Observer: obs, Logger: w.log}
	return forpods.NodeConfig{Resources: w.cfg.PodIdentityResources, MaxResources: w.cfg.PodIdentityMaxResources,
		Owners: w.cfg.PodIdentityOwners, Caps: caps, CacheSize: w.cfg.WatchCacheSize, Res: w.res, Caches: w.caches,
		Sync: sync.InPool(w.follower, w.poolStats), Store: w.store, Restored: w.restored,
		API: listwatch.NewForNamespace(w.cloud, w.link.Connected, w.log)}, nil
}
