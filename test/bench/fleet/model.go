//go:build e2e

package fleet

import (
	"bytes"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
)

// modelNodes is the fleet the report scales its measured per-node
// constants to.
const modelNodes = 10000

// perNode is one side's measured cost divided by the nodes that made it.
type perNode struct {
	watches, requestsPerMin, bytesPerMin float64
}

func (r *fleetResults) perNode(s sideCost) perNode {
	n := float64(r.cfg.Nodes)
	return perNode{watches: float64(s.watches) / n, requestsPerMin: s.allPerMin() / n, bytesPerMin: s.bytesPerMin / n}
}

// writeModel writes the 10,000-node model: each measured per-node
// constant times modelNodes, for the steady state (round 1) and each
// restart.
func (r *fleetResults) writeModel(b *bytes.Buffer) {
	n := float64(r.cfg.Nodes)
	l, d := r.perNode(r.lite), r.perNode(r.direct)
	fmt.Fprintf(b, "Model of %d nodes from this run's per-node constants (measured at N=%d, multiplied; not measured):\n\n", modelNodes, r.cfg.Nodes)
	b.WriteString("| | apiserver-lite per node | × nodes | kubelet read set direct per node | × nodes |\n| --- | --- | --- | --- | --- |\n")
	row := func(name string, lite, direct float64, unit string, scale float64) {
		fmt.Fprintf(b, "| %s | %.2f %s | %.0f %s | %.2f %s | %.0f %s |\n", name, lite, unit, lite*modelNodes/scale, modelUnit(unit, scale),
			direct, unit, direct*modelNodes/scale, modelUnit(unit, scale))
	}
	row("steady state: open cloud watches", l.watches, d.watches, "", 1)
	row("steady state: requests a minute, watches included", l.requestsPerMin, d.requestsPerMin, "", 1)
	row("steady state: bytes sent a minute", l.bytesPerMin/1024, d.bytesPerMin/1024, "KiB", 1024)
	row("cloud restart: requests", float64(r.cloudRestart.requests)/n, float64(r.directRestart.requests)/n, "", 1)
	row("cloud restart: bytes sent", r.cloudRestart.bytes.total()/n/1024, r.directRestart.bytes.total()/n/1024, "KiB", 1024)
	fmt.Fprintf(b, "| restart of every apiserver-lite: requests | %.2f | %.0f | (a kubelet restart is not measured) | |\n",
		float64(r.reboot.requests)/n, float64(r.reboot.requests)/n*modelNodes)
	fmt.Fprintf(b, "| restart of every apiserver-lite: bytes sent | %.2f KiB | %.0f MiB | | |\n\n",
		r.reboot.bytes.total()/n/1024, r.reboot.bytes.total()/n*modelNodes/bench.MiB)
}

// modelUnit is the unit of a fleet total: KiB per node scale to MiB.
func modelUnit(unit string, scale float64) string {
	if unit == "KiB" && scale == 1024 {
		return "MiB"
	}
	return unit
}
