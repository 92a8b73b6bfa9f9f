// Package bench measures apiserver-lite side by side with kube-apiserver on
// the same data: a real etcd and kube-apiserver (the e2e cloud), a data set
// of pods bound to the edge node and configmaps, and apiserver-lite syncing
// it through a byte-counting link proxy.
//
// TestBench is the benchmark behind `make bench`. It runs only when
// BENCH_REPORT names the Markdown file to write; it replaces the part of
// that file between the generated-section markers, or writes the whole
// file when they are missing. BENCH_SCALE scales the data set (1: 5,000
// pods of about 8 KB and 2,000 configmaps; 10: 50,000 objects) and
// BENCH_ROUNDS sets how many alternating rounds each figure gets.
//
// TestBenchSmoke runs the same harness on a tiny data set for one round in
// `make test`, and fails when a figure is missing or the two servers
// disagree on what they serve, so the harness cannot rot.
//
// Both need the e2e binaries; see package framework.
package bench
