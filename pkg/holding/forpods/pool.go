package forpods

import (
	"context"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	scope "github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/pool"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
)

// The node in its pool (docs/pool.md): package pool takes the node's
// TokenRequest and transport as functions, so it reaches neither holding
// nor door; these give it the node's, and read the holdings for pods
// from its leader.

// PoolMember is m, the node's pool membership, on the node's clients:
// its tokens are minted by the node for its own pods (NodeMinterFor) and
// sent over the node's connections (conns).
func PoolMember(m pool.MemberConfig, cloud *rest.Config, conns *link.Conns) pool.MemberConfig {
	m.Cloud = cloud
	m.MintFor = func(audiences []string) (pool.Minter, error) {
		mint, err := NodeMinterFor(cloud, audiences)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, p pool.Pod) (string, time.Time, error) { return mint(ctx, door.Pod(p)) }, nil
	}
	m.TokenConfig = func(tokens transport.ResettableTokenSource) *rest.Config { return TokenConfig(cloud, conns, tokens) }
	return m
}

// InPool makes d's holdings read from f's leader as the owner pod their
// sync runs as (pool.Follower.ForPods), with their cloud bytes counted in
// stats as the cloud's; d unchanged without a pool (f nil).
func (d SyncDeps) InPool(f *pool.Follower, stats *pool.Stats) SyncDeps {
	if f == nil {
		return d
	}
	d.Wrap = func(r cloudsync.Resource) transport.WrapperFunc { return stats.CountBytes(r.Key(), pool.UpstreamCloud) }
	d.Pool = func(r cloudsync.Resource, cloud cache.ListerWatcherWithContext, id func() (door.Pod, bool)) cache.ListerWatcherWithContext {
		return f.ForPods(r, cloud, func() (pool.Pod, bool) { p, ok := id(); return pool.Pod(p), ok })
	}
	return d
}

// PoolDoor is what the pool door serves (holding.PoolWide: what the node
// holds whole, and what held holds for pods while an owner syncs it) and
// when (while e says this member leads); nothing without a pool (e nil).
func PoolDoor(e *pool.Elector, res []cloudsync.Resource, held *Holdings) door.PoolConfig {
	if e == nil {
		return door.PoolConfig{}
	}
	return door.PoolConfig{Serves: scope.PoolWide(res, CurrentOf(held)),
		Leading: func() (bool, <-chan struct{}) {
			_, _, self, changed := e.Leader()
			return self, changed
		}}
}
