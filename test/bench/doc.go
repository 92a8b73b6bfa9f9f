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
// TestBenchHeld, also run by `make bench`, measures what holding a
// resource for the node's pods costs: BENCH_SCALE times 1,000 services
// and EndpointSlices, apiserver-lite on the node's credentials, and
// components reading services and EndpointSlices on pod-bound tokens,
// first through its authenticated door (the first starts holding
// EndpointSlices), then straight against the cloud. It reports
// apiserver-lite's memory and the cloud's requests and watches in its own
// generated section of the same report; TestBenchHeldSmoke runs it on 20
// services in `make test`.
//
// TestBenchHeldNamespace and TestBenchHeldNodes, also run by `make bench`,
// measure one client's holding the same way (heldone.go): an operator's
// ConfigMaps informer in its namespace, and a CNI agent's Nodes informer
// on kube-flannel's service account (every Node held whole beside the
// node's own), each synced through the door, again from the holding, then
// straight against the cloud on the same pod-bound token; each writes its
// own section, and TestBenchHeldNamespaceSmoke and TestBenchHeldNodesSmoke
// run them on 20 objects in `make test`.
//
// TestBenchPool (package pool, test/bench/pool) is `make bench-pool`, and
// TestBenchFleet (package fleet, test/bench/fleet) is `make bench-fleet`;
// each has its own package beside this one and uses this package's
// exported harness: the machine description (Machine, ReadMachine), the
// processes' CPU and memory (ReadCPU, ReadMemory), the cloud's open
// watches (OpenWatches, OpenWatchesByResource), the EndpointSlice readers
// and services of TestBenchHeld (Reader, StartReader, SeedServices), named
// steps (Step, RunSteps) and the report helpers (Verdict, MiBOf).
//
// TestBenchSmoke runs the same harness on a tiny data set for one round in
// `make test`, and fails when a figure is missing or the two servers
// disagree on what they serve, so the harness cannot rot.
//
// All need the e2e binaries; see package framework.
package bench
