package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
)

// Defaults of the pool settings (docs/pool.md).
const (
	defaultPoolNamespace      = "apiserver-lite-pool"
	defaultPoolServiceAccount = "apiserver-lite-pool"
	defaultPoolAudience       = "apiserver-lite-pool"
)

// poolConfig are the settings of the node's pool. Keys in the config file
// are the flag names.
type poolConfig struct {
	// Pool names the node's pool; empty: no pool.
	Pool string `mapstructure:"pool"`
	// PoolListenAddress is the pool door, IP:port on the node's LAN
	// address.
	PoolListenAddress string `mapstructure:"pool-listen-address"`
	// PoolNamespace holds the pool's Lease and service account.
	PoolNamespace string `mapstructure:"pool-namespace"`
	// PoolServiceAccount is the account the election runs as.
	PoolServiceAccount string `mapstructure:"pool-service-account"`
	// PoolAudience is the audience of the tokens followers present at the
	// leader's pool door.
	PoolAudience string `mapstructure:"pool-audience"`
}

func addPoolFlags(fs *pflag.FlagSet) {
	fs.String("pool", "", "this node's pool (a DNS label): its members elect a leader that serves them the pool-wide resources it holds; "+
		"empty: no pool")
	fs.String("pool-listen-address", "", "the pool door, IP:port on this node's LAN address (one of its Node's addresses); required with pool")
	fs.String("pool-namespace", defaultPoolNamespace, "namespace of the pool's Lease and service account")
	fs.String("pool-service-account", defaultPoolServiceAccount,
		"service account whose pod on this node the election's token is minted for (see configs/pool.yaml)")
	fs.String("pool-audience", defaultPoolAudience, "audience of the tokens followers present at the leader's pool door")
}

func (c poolConfig) validate() error {
	if c.Pool == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(c.Pool); len(errs) > 0 {
		return fmt.Errorf("pool must be a DNS label, got %q", c.Pool)
	}
	host, _, err := net.SplitHostPort(c.PoolListenAddress)
	if err != nil {
		return fmt.Errorf("pool-listen-address must be IP:port with pool set, got %q", c.PoolListenAddress)
	}
	if a, err := netip.ParseAddr(host); err != nil || a.IsUnspecified() {
		return fmt.Errorf("pool-listen-address must name one IP of this node, got %q", c.PoolListenAddress)
	}
	if errs := validation.IsDNS1123Label(c.PoolNamespace); len(errs) > 0 {
		return fmt.Errorf("pool-namespace must be a DNS label, got %q", c.PoolNamespace)
	}
	if errs := validation.IsDNS1123Subdomain(c.PoolServiceAccount); len(errs) > 0 {
		return fmt.Errorf("pool-service-account must be a DNS subdomain, got %q", c.PoolServiceAccount)
	}
	if c.PoolAudience == "" {
		return fmt.Errorf("pool-audience must not be empty with pool set")
	}
	return nil
}

// poolMember is the node's pool membership on its clients: its tokens
// are minted by the node for its own pods (forpods.NodeMinterFor) and
// sent over the node's connections.
func poolMember(cfg config, cloud *rest.Config, conns *link.Conns, pods *versioncache.Cache, log *slog.Logger) pool.MemberConfig {
	return pool.MemberConfig{Pool: cfg.Pool, Namespace: cfg.PoolNamespace, ServiceAccount: cfg.PoolServiceAccount,
		Audience: cfg.PoolAudience, Self: pool.Holder{Node: cfg.NodeName, Address: cfg.PoolListenAddress},
		Cloud: cloud, Pods: pods, Logger: log,
		MintFor: func(audiences []string) (pool.Minter, error) {
			mint, err := forpods.NodeMinterFor(cloud, audiences)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, p pool.Pod) (string, time.Time, error) { return mint(ctx, door.Pod(p)) }, nil
		},
		TokenConfig: func(tokens transport.ResettableTokenSource) *rest.Config {
			return forpods.TokenConfig(cloud, conns, tokens)
		}}
}

// poolUpstream is the upstream of what the node syncs on its own
// credentials (holding.Upstream): f's leader or the cloud.
func poolUpstream(f *pool.Follower, res []cloudsync.Resource) func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
	if f == nil {
		return holding.Upstream(res, nil)
	}
	return holding.Upstream(res, f.Node)
}

// poolSyncDeps makes deps's holdings for pods read from f's leader, with
// their cloud bytes counted in stats; deps unchanged without a pool.
func poolSyncDeps(deps forpods.SyncDeps, f *pool.Follower, stats *pool.Stats) forpods.SyncDeps {
	if f == nil {
		return deps
	}
	deps.Wrap = func(r cloudsync.Resource) transport.WrapperFunc { return stats.CountBytes(r.Key(), pool.UpstreamCloud) }
	deps.Pool = func(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, id func() (door.Pod, bool)) cache.ListerWatcherWithContext {
		return f.ForPods(r, cloud, func() (pool.Pod, bool) { p, ok := id(); return pool.Pod(p), ok })
	}
	return deps
}

// electionRunner is e's Run, or nil.
func electionRunner(e *pool.Elector) func(context.Context) error {
	if e == nil {
		return nil
	}
	return e.Run
}
