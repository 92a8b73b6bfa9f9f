package main

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
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
