// Package pool is the pool benchmark, TestBenchPool, behind `make
// bench-pool`: for each size of BENCH_POOL_SIZES, that many nodes on their
// node credentials, each reaching the cloud through a counting link of its
// own (a TCP proxy that passes TLS through and counts every connection's
// bytes each way, link.go) and each with a reader of EndpointSlices on a
// pod-bound token, first unpooled, then pooled, then with the leader
// killed during the churn (failover.go).
//
// It runs only when BENCH_POOL_REPORT names the Markdown file to write
// (the Makefile passes an absolute path: a test's working directory is
// this package's directory); it replaces the file's generated section.
// TestPoolVerdicts shows each of its verdicts failing on figures that miss
// the goal, without a cloud.
//
// The cloud, the machine description, the readers and the report helpers
// come from package bench; the files here are the pool's own: its
// configuration (config.go), data set (data.go), measurements
// (measure.go) and report (report.go). All need the e2e binaries; see
// package framework.
package pool
