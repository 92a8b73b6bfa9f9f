package operations

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// WholeSuffix labels the whole copy, held for pods, of a resource the
// scope syncs in part ("nodes@cluster" beside the node's own "nodes").
const WholeSuffix = "@cluster"

// resourceLabel names a resource in metrics, health and status: its
// group-resource, as kube-apiserver's metrics do ("pods",
// "leases.coordination.k8s.io").
func resourceLabel(r cloudsync.Resource) string { return r.GVR.GroupResource().String() }

// resourceLabels names each of res: its resourceLabel, with WholeSuffix
// for one held for pods whose resource another of res syncs in part, so
// no two share a label.
func resourceLabels(res []cloudsync.Resource) []string {
	synced := map[string]bool{}
	for _, r := range res {
		if !r.ForPods {
			synced[resourceLabel(r)] = true
		}
	}
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = resourceLabel(r)
		if r.ForPods && synced[out[i]] {
			out[i] += WholeSuffix
		}
	}
	return out
}

// Observer forwards the sync loops' progress to the metrics, keyed by the
// resource's label rather than its storage key.
type Observer struct {
	m      *metrics.Metrics
	labels map[string]string // storage key -> label; never changed
}

// NewObserver returns the Observer of res's sync loops for m.
func NewObserver(m *metrics.Metrics, res []cloudsync.Resource) *Observer {
	o := &Observer{m: m, labels: make(map[string]string, len(res))}
	labels := resourceLabels(res)
	for i, r := range res {
		o.labels[r.Key()] = labels[i]
	}
	return o
}

func (o *Observer) label(key string) string {
	if l, ok := o.labels[key]; ok {
		return l
	}
	return key
}

// Relisted counts a relist of key, for reason.
func (o *Observer) Relisted(key, reason string) { o.m.Relisted(o.label(key), reason) }

// RelistBytes counts the bytes of whole objects a relist of key received.
func (o *Observer) RelistBytes(key string, n int) { o.m.RelistBytes(o.label(key), n) }

// CloudError records the cloud's error for key.
func (o *Observer) CloudError(key string, e error) { o.m.CloudError(o.label(key), e) }

// CloudHeard records that the cloud was heard from for key.
func (o *Observer) CloudHeard(key string) { o.m.CloudHeard(o.label(key)) }

// ObservedStore times every commit of the sync loops and counts the
// changes it made durable. Other methods are the store's own.
type ObservedStore struct {
	*metastore.Store
	Observer *Observer
}

// Apply applies ops to key's state as the store does, timed and counted.
func (s ObservedStore) Apply(ctx context.Context, key string, ops []metastore.Op, watermark uint64) error {
	start := s.Observer.m.CommitStarted()
	err := s.Store.Apply(ctx, key, ops, watermark)
	s.Observer.m.CommitDone(s.Observer.label(key), start, len(ops), err)
	return err
}
