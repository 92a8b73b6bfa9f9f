//go:build e2e

package fleet

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Environment of TestBenchFleet.
const (
	envFleetReport = "BENCH_FLEET_REPORT" // Markdown file to write; unset: skip
	envFleetNodes  = "BENCH_FLEET_NODES"  // nodes, default defaultFleetNodes
	envFleetPods   = "BENCH_FLEET_PODS"   // pods per node, default defaultFleetPods
	envFleetRounds = "BENCH_FLEET_ROUNDS" // rounds of both sides, default defaultFleetRounds
	// envFleetSettle is how long each side runs before its window, a Go
	// duration, default fleetSettle. Past 10 minutes every watch has been
	// reopened at least once (a watch lasts 5 to 10), so the window sees a
	// long-running node's watches, not a fresh start's.
	envFleetSettle = "BENCH_FLEET_SETTLE"
)

// The fleet the issue measures.
const (
	defaultFleetNodes = 100
	defaultFleetPods  = 30
	// defaultFleetRounds of both sides' steady states, in turn: one is
	// noise on a shared machine, three give a median and a spread.
	defaultFleetRounds = 3
	// fleetWindow is how long each side's steady state is counted.
	fleetWindow = 2 * time.Minute
	// fleetSettle lets the starts' requests finish before a window.
	fleetSettle = 20 * time.Second
	// fleetCatchUp bounds every node's catch-up after a restart.
	fleetCatchUp = 3 * time.Minute
	// fleetNamespace holds the fleet's pods, secrets and configmaps.
	fleetNamespace = "fleet"
)

// fleetConfig sizes one fleet run.
type fleetConfig struct {
	Nodes, Pods int
	// Rounds of both sides' steady states, apiserver-lite's first.
	Rounds int
	// Window is each side's steady state counted; Settle precedes it.
	Window, Settle time.Duration
}

// fleetSmokeConfig is make test's run: three nodes, one short round.
func fleetSmokeConfig() fleetConfig {
	return fleetConfig{Nodes: 3, Pods: 4, Rounds: 1, Window: 20 * time.Second, Settle: 5 * time.Second}
}

// fleetConfigFromEnv reads the full run's size from the environment.
func fleetConfigFromEnv() (fleetConfig, error) {
	c := fleetConfig{Nodes: defaultFleetNodes, Pods: defaultFleetPods, Rounds: defaultFleetRounds, Window: fleetWindow, Settle: fleetSettle}
	for _, v := range []struct {
		env string
		dst *int
	}{{envFleetNodes, &c.Nodes}, {envFleetPods, &c.Pods}, {envFleetRounds, &c.Rounds}} {
		s := os.Getenv(v.env)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("%s=%q: want a positive integer", v.env, s)
		}
		*v.dst = n
	}
	if s := os.Getenv(envFleetSettle); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive duration", envFleetSettle, s)
		}
		c.Settle = d
	}
	return c, nil
}

// nodeName is the name of fleet node i.
func nodeName(i int) string { return fmt.Sprintf("fleet-%03d", i) }
