// Package direct is the fleet benchmark's direct side: one node's kubelet
// read set (its pods, its Node, every service, each pod's secret and
// configmap alone, RuntimeClasses and CSIDrivers) listed and watched
// straight against the cloud, as a kubelet without apiserver-lite does.
//
// Each node's read set runs in a process of its own (Start), as a
// kubelet does: the cloud writes each node's watch events to a process
// that sleeps between them, not to one shared busy process. That process
// is the benchmark's own test binary started again with
// BENCH_FLEET_DIRECT_CHILD set; its TestMain must call RunChildIfAsked
// first. The two speak in lines: the benchmark writes the node's spec,
// then commands (renew the Lease, catch up with a new pod); the process
// answers when synced, when a pod's reads have synced, and with each
// failed Lease renewal's cause, which the benchmark counts in its
// lease.Failures.
package direct
