// Package snapshot saves a copy of the daemon's store and seeds a data dir
// from one: a consistent copy while the daemon runs, without the node's
// credentials (they are fetched again), and a restore that refuses a
// damaged snapshot, another node's snapshot and, unless forced, an
// existing store. cmd holds the subcommands' flags.
package snapshot
