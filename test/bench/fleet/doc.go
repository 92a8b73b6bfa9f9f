// Package fleet is the fleet benchmark, TestBenchFleet, behind `make
// bench-fleet`: N nodes' apiserver-lites against one cloud beside the same
// nodes' kubelet read sets made directly (direct.go, kubelet.go), in
// rounds (rounds.go), each put through a cloud restart and the
// apiserver-lites through a fleet-wide restart (restart.go).
//
// restart_*.go follow that restart's window (the change's creates timed at
// the wire, CPU by process, API Priority and Fairness levels,
// kube-apiserver's profile: profile.go, suspects.go); lease*.go count
// failed Lease renewals by phase with their causes. verdict.go and
// report.go render the report; model.go scales the figures to a larger
// fleet.
//
// It runs only when BENCH_FLEET_REPORT names the Markdown file to write
// (the Makefile passes an absolute path: a test's working directory is
// this package's directory); BENCH_FLEET_NODES, BENCH_FLEET_PODS and
// BENCH_FLEET_ROUNDS size it. TestBenchFleetSmoke runs it on three nodes
// in `make test`; TestFleetCheck and the Parse and Restart tests check its
// parsers and verdicts without a cloud.
//
// The cloud, the machine description, the processes' CPU and memory and
// the report helpers come from package bench. All need the e2e binaries;
// see package framework.
package fleet
