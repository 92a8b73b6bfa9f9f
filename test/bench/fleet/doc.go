// Package fleet is the fleet benchmark, TestBenchFleet, behind `make
// bench-fleet`: N nodes' apiserver-lites against one cloud beside the same
// nodes' kubelet read sets made directly, in rounds (rounds.go), each put
// through a cloud restart (restart.go) and the apiserver-lites through a
// fleet-wide daemon restart (reboot.go), whose window window.go follows.
// TestBenchFrames (frames_test.go, `make bench-frames`) counts one node's
// HTTP/2 frames to the cloud on each side instead.
//
// This package runs the fleet and holds its results and report; the
// measuring is in its subpackages, none of which knows the fleet's types:
// direct (the direct side, a process per node), lease (Lease renewals and
// their failures by phase and cause), cpu (kube-apiserver's cores sampled,
// the machine's CPU by process), apf (API Priority and Fairness levels),
// change (the change's creates timed at the wire), profile
// (kube-apiserver's CPU profiles and the suspected costs in them) and
// frames (HTTP/2 frames from a client's log). verdict.go and report.go
// render the report; model.go scales the figures to a larger fleet.
//
// It runs only when BENCH_FLEET_REPORT names the Markdown file to write
// (the Makefile passes an absolute path: a test's working directory is
// this package's directory); BENCH_FLEET_NODES, BENCH_FLEET_PODS and
// BENCH_FLEET_ROUNDS size it. TestBenchFleetSmoke runs it on three nodes
// in `make test`; TestFleetCheck, TestFleetReport and the reboot and lease
// tests check its report and verdicts without a cloud, and each
// subpackage's tests its parsers. TestMain first runs a direct node's
// process when the test binary was started as one (see package direct).
//
// The cloud, the machine description, the processes' CPU and memory and
// the report helpers come from package bench. All need the e2e binaries;
// see package framework.
package fleet
