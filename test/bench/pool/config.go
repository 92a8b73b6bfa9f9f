//go:build e2e

package pool

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment of TestBenchPool.
const (
	envPoolReport = "BENCH_POOL_REPORT" // Markdown file to write; unset: skip
	envPoolSizes  = "BENCH_POOL_SIZES"  // pool sizes, space-separated; default defaultPoolSizes
)

// The pool run the issue measures.
const (
	defaultPoolSizes = "10 50"
	// poolServices is the services, and EndpointSlices, the cloud holds.
	poolServices = 1000
	// poolUpdatesPerSec is the EndpointSlice churn during the whole run.
	poolUpdatesPerSec = 10
	// poolWindow is how long each side's steady state is counted;
	// poolSettle lets the starts' requests finish first.
	poolWindow = time.Minute
	poolSettle = 20 * time.Second
	// poolStart bounds the members' starts, the election and every
	// reader's sync.
	poolStart = 4 * time.Minute
	// poolAfterKill is how long after the leader is killed the followers'
	// updates are awaited before the failover is measured; their LISTs
	// are counted until every follower reads from the new leader (the
	// Lease's 30 s, a retry's jitter, the moves), and poolSettle more.
	poolAfterKill = 30 * time.Second
	// poolElectionProbes is how many Lease GETs measure one election
	// request's bytes on the link.
	poolElectionProbes = 20
)

// The pool's names: the daemon's defaults for its namespace, service
// account and audience.
const (
	poolBenchName     = "site-a"
	poolBenchNS       = "apiserver-lite-pool"
	poolBenchAudience = "apiserver-lite-pool"
	poolProxySA       = "kube-proxy"
	// slicesHolding is the EndpointSlices held for pods, as the daemon's
	// metrics name them.
	slicesHolding = "discovery.k8s.io/v1/endpointslices?forPods=true"
)

// poolConfig sizes one pool run.
type poolConfig struct {
	Members       int
	Services      int
	UpdatesPerSec int
	// Window is each side's steady state counted; Settle precedes it.
	Window, Settle time.Duration
}

// poolSizesFromEnv reads the pool sizes to run, each at least 2 (a
// leader and a follower).
func poolSizesFromEnv() ([]int, error) {
	s := os.Getenv(envPoolSizes)
	if strings.TrimSpace(s) == "" {
		s = defaultPoolSizes
	}
	var sizes []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 || n > poolMaxMembers {
			return nil, fmt.Errorf("%s=%q: want sizes from 2 to %d", envPoolSizes, s, poolMaxMembers)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// poolMaxMembers is the most members: each gets a loopback address
// 127.0.0.2 and up.
const poolMaxMembers = 200

// poolConfigOf is the full run for a pool of n.
func poolConfigOf(n int) poolConfig {
	return poolConfig{Members: n, Services: poolServices, UpdatesPerSec: poolUpdatesPerSec, Window: poolWindow, Settle: poolSettle}
}

// poolMemberName is the node name of member i.
func poolMemberName(i int) string { return fmt.Sprintf("pool-%03d", i) }
