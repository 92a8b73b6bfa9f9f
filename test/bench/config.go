//go:build e2e

package bench

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

// Environment of TestBench.
const (
	envReport = "BENCH_REPORT" // Markdown file to write; unset: skip
	envScale  = "BENCH_SCALE"  // data set scale, default 1
	envRounds = "BENCH_ROUNDS" // alternating rounds, default defaultRounds
)

// The data set at scale 1, as issue 12 defines it.
const (
	basePods       = 5000
	baseConfigMaps = 2000
)

// defaultRounds is how many times each side-by-side figure is measured.
const defaultRounds = 3

// memorySteps are the object counts at which a fresh apiserver-lite syncs
// from scratch and both servers' memory is read; steps above the data set
// are dropped and the full data set is always the last step.
var memorySteps = []int{2000, 8000, 20000, 50000}

// Config sizes one harness run.
type Config struct {
	Pods, ConfigMaps int
	Rounds           int
	// ListReps is how many LISTs of each kind one round times; the round's
	// figure is their median.
	ListReps int
	// Watchers, UpdatesPerSec and WatchFor shape the watch-delivery load.
	Watchers      int
	UpdatesPerSec int
	WatchFor      time.Duration
	// ProfileDir, when set, receives apiserver-lite's pprof profiles if it
	// serves /debug/pprof.
	ProfileDir string
	// ProfileFor is how long the informer starts are repeated under the
	// WatchList CPU profiles, so that one start's few hundred milliseconds
	// give enough samples; whole seconds.
	ProfileFor time.Duration
}

// scaled returns the configuration for a data set scale.
func scaled(scale float64, rounds int) Config {
	c := Config{
		Pods:          int(math.Max(1, math.Round(basePods*scale))),
		ConfigMaps:    int(math.Max(1, math.Round(baseConfigMaps*scale))),
		Rounds:        rounds,
		ListReps:      3,
		Watchers:      50,
		UpdatesPerSec: 100,
		WatchFor:      10 * time.Second,
		ProfileFor:    3 * time.Second,
	}
	return c
}

// smokeConfig is the seconds-long run of make test: 70 objects, one round,
// a light watch load.
func smokeConfig() Config {
	c := scaled(0.01, 1)
	c.ListReps = 1
	c.Watchers = 5
	c.UpdatesPerSec = 50
	c.WatchFor = time.Second
	c.ProfileFor = time.Second
	return c
}

// configFromEnv reads BENCH_SCALE and BENCH_ROUNDS.
func configFromEnv() (Config, error) {
	scale, rounds := 1.0, defaultRounds
	if v := os.Getenv(envScale); v != "" {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || s <= 0 {
			return Config{}, fmt.Errorf("%s=%q: want a positive number", envScale, v)
		}
		scale = s
	}
	if v := os.Getenv(envRounds); v != "" {
		r, err := strconv.Atoi(v)
		if err != nil || r <= 0 {
			return Config{}, fmt.Errorf("%s=%q: want a positive integer", envRounds, v)
		}
		rounds = r
	}
	return scaled(scale, rounds), nil
}

// Objects is the size of the full data set.
func (c Config) Objects() int { return c.Pods + c.ConfigMaps }

// steps returns the object counts of the memory curve, ascending, ending
// with the full data set.
func (c Config) steps() []int {
	var out []int
	for _, s := range memorySteps {
		if s < c.Objects() {
			out = append(out, s)
		}
	}
	return append(out, c.Objects())
}

// share returns how many pods and configmaps make up n objects, in the
// data set's proportion.
func (c Config) share(n int) (pods, configMaps int) {
	pods = int(math.Round(float64(n) * float64(c.Pods) / float64(c.Objects())))
	return pods, n - pods
}
