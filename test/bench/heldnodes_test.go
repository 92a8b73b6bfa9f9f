//go:build e2e

package bench

import "testing"

// TestBenchHeldNodes is make bench's CNI agent part: what holding
// BENCH_SCALE times 1,000 Nodes whole for flannel costs apiserver-lite
// and the cloud, beside the same informer reading the cloud directly. It
// writes its own section of the report.
func TestBenchHeldNodes(t *testing.T) { benchHeldOne(t, nodesSpec, nodesBase) }

// TestBenchHeldNodesSmoke runs it on 20 peer Nodes and fails when a
// figure is missing, an informer does not hold every Node, Nodes were not
// held whole for the agent, or its second sync was not served from them.
func TestBenchHeldNodesSmoke(t *testing.T) { smokeHeldOne(t, nodesSpec, 20) }
