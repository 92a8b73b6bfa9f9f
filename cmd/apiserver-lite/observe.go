package main

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/metrics"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// resourceLabel names a resource in metrics, health and status: its
// group-resource, as kube-apiserver's metrics do ("pods",
// "leases.coordination.k8s.io").
func resourceLabel(r cloudsync.Resource) string { return r.GVR.GroupResource().String() }

// observer forwards the sync loops' progress to the metrics, keyed by the
// resource's label rather than its storage key.
type observer struct {
	m      *metrics.Metrics
	labels map[string]string // storage key -> label; never changed
}

func newObserver(m *metrics.Metrics, res []cloudsync.Resource) *observer {
	o := &observer{m: m, labels: make(map[string]string, len(res))}
	for _, r := range res {
		o.labels[r.Key()] = resourceLabel(r)
	}
	return o
}

func (o *observer) label(key string) string {
	if l, ok := o.labels[key]; ok {
		return l
	}
	return key
}

func (o *observer) Relisted(key, reason string)    { o.m.Relisted(o.label(key), reason) }
func (o *observer) CloudError(key string, e error) { o.m.CloudError(o.label(key), e) }
func (o *observer) CloudHeard(key string)          { o.m.CloudHeard(o.label(key)) }

// observedStore times every commit of the sync loops and counts the
// changes it made durable. Other methods are the store's own.
type observedStore struct {
	*metastore.Store
	obs *observer
}

func (s observedStore) Apply(ctx context.Context, key string, ops []metastore.Op, watermark uint64) error {
	start := s.obs.m.CommitStarted()
	err := s.Store.Apply(ctx, key, ops, watermark)
	s.obs.m.CommitDone(s.obs.label(key), start, len(ops), err)
	return err
}
