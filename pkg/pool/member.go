package pool

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
)

// MemberConfig is a node's membership of its pool: the settings and the
// node's clients its election and follower are built on.
type MemberConfig struct {
	// Pool names the pool; empty: no pool.
	Pool string
	// Namespace holds the pool's Lease and ServiceAccount, whose pod on
	// the node the election's token is minted for.
	Namespace, ServiceAccount string
	// Audience is that of the tokens followers present at the leader.
	Audience string
	// Self is this member as the Lease names it when it leads.
	Self Holder
	// Cloud is the node's credentials.
	Cloud *rest.Config
	// Pods are the node's pods; nil: they are not synced.
	Pods *versioncache.Cache
	// MintFor is the node's TokenRequest for a pod of its own with
	// audiences (nil: the API server's).
	MintFor func(audiences []string) (Minter, error)
	// TokenConfig is the cloud on tokens, over the node's connections.
	TokenConfig func(tokens transport.ResettableTokenSource) *rest.Config
	Logger      *slog.Logger
}

// NewElection is the node's pool election on a token minted for the pool
// service account's pod on the node; nil without a pool.
func NewElection(c MemberConfig) (*Elector, error) {
	if c.Pool == "" {
		return nil, nil
	}
	if c.Pods == nil {
		return nil, fmt.Errorf("pool %s: the node's pods are not synced, so no pool pod's token can be minted", c.Pool)
	}
	mint, err := c.MintFor(nil)
	if err != nil {
		return nil, err
	}
	tokens := Tokens(PodFinder(c.Pods, c.Namespace, c.ServiceAccount), mint, clock.RealClock{})
	cs, err := kubernetes.NewForConfig(c.TokenConfig(tokens))
	if err != nil {
		return nil, fmt.Errorf("pool lease client: %w", err)
	}
	return New(Config{Pool: c.Pool, Namespace: c.Namespace, Leases: cs.CoordinationV1(), Logger: c.Logger, Self: c.Self})
}

// NewMemberFollower reads the pool-wide resources held for the node's
// pods from e's leader, presenting tokens for c.Audience, and counts
// their bytes in the Stats it returns; nil without a pool (e nil).
func NewMemberFollower(c MemberConfig, e *Elector) (*Follower, *Stats, error) {
	if e == nil {
		return nil, nil, nil
	}
	ca := c.Cloud.TLSClientConfig.CAData
	if len(ca) == 0 && c.Cloud.TLSClientConfig.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(c.Cloud.TLSClientConfig.CAFile); err != nil {
			return nil, nil, fmt.Errorf("pool: the cluster CA: %w", err)
		}
	}
	mint, err := c.MintFor([]string{c.Audience})
	if err != nil {
		return nil, nil, err
	}
	nodeTLS, err := rest.TLSConfigFor(c.Cloud)
	if err != nil {
		return nil, nil, fmt.Errorf("pool: the node's certificate: %w", err)
	}
	stats := NewStats()
	return NewFollower(FollowerConfig{Elector: e, CA: ca, Stats: stats, Logger: c.Logger, Clock: clock.RealClock{},
		NodeTLS: nodeTLS, Mint: mint}), stats, nil
}

// RunnerOf is e's Run, or nil without a pool (e nil).
func RunnerOf(e *Elector) func(context.Context) error {
	if e == nil {
		return nil
	}
	return e.Run
}

// NodeOf is f's Node, the leader holding.Upstream reads what the node
// syncs on its own credentials through, or nil without a pool (f nil),
// which leaves every resource on the cloud.
func NodeOf(f *Follower) func(cloudsync.Resource, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
	if f == nil {
		return nil
	}
	return f.Node
}
