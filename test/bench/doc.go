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
// TestBenchPool (pool_*.go) is `make bench-pool`: for each size of
// BENCH_POOL_SIZES, that many nodes on their node credentials, each
// reaching the cloud through a counting link of its own (a TCP proxy that
// passes TLS through and counts every connection's bytes each way) and
// each with a reader of EndpointSlices on a pod-bound token, first
// unpooled, then pooled, then with the leader killed during the churn.
// It runs only when BENCH_POOL_REPORT names the Markdown file to write;
// TestPoolVerdicts shows each of its verdicts failing on figures that
// miss the goal.
//
// TestBenchFleet (fleet*.go) is `make bench-fleet`: N nodes' apiserver-lites
// against one cloud beside the same nodes' kubelet read sets made directly,
// in rounds, each put through a cloud restart and the apiserver-lites
// through a fleet-wide restart. fleet_restart_*.go follow that restart's
// window (the change's creates timed at the wire, CPU by process, API
// Priority and Fairness levels, kube-apiserver's profile);
// fleet_lease*.go count failed Lease renewals by phase with their causes.
// It runs only when BENCH_FLEET_REPORT names the Markdown file to write;
// TestBenchFleetSmoke runs it on three nodes in `make test`.
//
// TestBenchSmoke runs the same harness on a tiny data set for one round in
// `make test`, and fails when a figure is missing or the two servers
// disagree on what they serve, so the harness cannot rot.
//
// All need the e2e binaries; see package framework.
package bench
