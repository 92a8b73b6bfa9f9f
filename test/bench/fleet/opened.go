//go:build e2e

package fleet

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
)

// cloudWatchesPoll is how often a starting node's metrics are read while
// the benchmark waits for its cloud watches; its door answers them from
// memory, on the node's own identity, without asking the cloud.
const cloudWatchesPoll = 50 * time.Millisecond

// daemonWatches is what a node's metrics say of its cloud watches.
type daemonWatches struct {
	open int // apiserver_lite_cloud_watches
	held int // secrets and configmaps held (apiserver_storage_objects)
}

// watchesOpened waits until node i's apiserver-lite holds its cloud
// watches open: one per resource it syncs and one per secret and
// configmap it holds, of which there are at least pods each (every pod
// references a secret and a configmap of its own). A direct node's
// process is taken as started once its informers have synced, with
// every watch open; a daemon serves from its store before then, and
// starting the next node at that moment had more starts share the cloud
// at once, so the node's watches opened over more seconds (watchPhases).
func (f *fleet) watchesOpened(ctx context.Context, i, pods int) error {
	cs, err := f.localClient(i)
	if err != nil {
		return err
	}
	syncs := 0
	for _, r := range holding.NodeResources(nodeName(i)) {
		if !r.OnDemand {
			syncs++
		}
	}
	ctx, cancel := context.WithTimeout(ctx, fleetCatchUp)
	defer cancel()
	var last daemonWatches
	var readErr error
	err = wait.PollUntilContextCancel(ctx, cloudWatchesPoll, true, func(ctx context.Context) (bool, error) {
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(ctx)
		if err != nil {
			readErr = err
			return false, nil
		}
		if last, err = parseDaemonWatches(body); err != nil {
			return false, err
		}
		return last.open >= syncs+max(last.held, 2*pods), nil
	})
	if err != nil {
		return fmt.Errorf("%s: %d cloud watches open, want %d: %d synced resources and %d secrets and configmaps held, at least %d (last read error: %v): %w",
			nodeName(i), last.open, syncs+max(last.held, 2*pods), syncs, last.held, 2*pods, readErr, err)
	}
	return nil
}

// parseDaemonWatches reads a daemon's open cloud watches and held secrets
// and configmaps from its metrics in the Prometheus text format.
func parseDaemonWatches(body []byte) (daemonWatches, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return daemonWatches{}, fmt.Errorf("daemon metrics: %w", err)
	}
	var w daemonWatches
	for _, m := range fams["apiserver_lite_cloud_watches"].GetMetric() {
		w.open += int(gaugeValue(m))
	}
	for _, m := range fams["apiserver_storage_objects"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "resource" && (l.GetValue() == "secrets" || l.GetValue() == "configmaps") {
				w.held += int(gaugeValue(m))
			}
		}
	}
	return w, nil
}

// gaugeValue is m's value, as a gauge or, without its TYPE line, untyped.
func gaugeValue(m *dto.Metric) float64 {
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetUntyped().GetValue()
}
