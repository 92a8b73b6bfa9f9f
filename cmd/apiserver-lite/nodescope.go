package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// GVRs node scope syncs or holds.
var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodesGVR      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// nodeScopeResources is what the Node authorizer lets system:node:<node>
// list and watch: its pods and own Node, services, runtimeclasses and
// csidrivers; and, held one by one while referenced, secrets and
// configmaps. Namespaces and endpointslices are not readable by a node.
func nodeScopeResources(node string) []cloudsync.Resource {
	return []cloudsync.Resource{
		{GVR: podsGVR, FieldSelector: "spec.nodeName=" + node},
		{GVR: nodesGVR, FieldSelector: "metadata.name=" + node},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}},
		{GVR: schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}},
		{GVR: schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}},
		{GVR: secretsGVR, OnDemand: true},
		{GVR: configMapsGVR, OnDemand: true},
	}
}

// scopedResources returns the scope, the configured resources in cluster
// scope or node scope's set, and the background check of a scope taken
// without the cloud (nil if none).
func scopedResources(ctx context.Context, cfg config, configured []cloudsync.Resource, cloud *rest.Config, store *metastore.Store, log *slog.Logger) (string, []cloudsync.Resource, scopeCheck, error) {
	ask, err := selfReview(cloud)
	if err != nil {
		return "", nil, nil, err
	}
	scope, check, err := resolveScope(ctx, cfg.SyncScope, cfg.NodeName, ask, store, log)
	if err != nil {
		return "", nil, nil, fmt.Errorf("sync scope: %w", err)
	}
	log.Info("sync scope", "scope", scope, "configured", cfg.SyncScope)
	if scope == scopeCluster {
		return scope, configured, check, nil
	}
	return scope, nodeScopeResources(cfg.NodeName), check, nil
}

// newDemand returns the runner holding the OnDemand resources of res, or
// nil if there are none.
func newDemand(cl cloudClients, res []cloudsync.Resource, caches []*versioncache.Cache, store *metastore.Store, link *cloudsync.Link, log *slog.Logger) (func(context.Context) error, error) {
	byGVR := map[schema.GroupVersionResource]int{}
	for i, r := range res {
		byGVR[r.GVR] = i
	}
	si, hasSecrets := byGVR[secretsGVR]
	ci, hasConfigMaps := byGVR[configMapsGVR]
	if !hasSecrets || !res[si].OnDemand {
		return nil, nil
	}
	pi, hasPods := byGVR[podsGVR]
	ni, hasNodes := byGVR[nodesGVR]
	if !hasConfigMaps || !hasPods || !hasNodes {
		return nil, fmt.Errorf("on-demand secrets need pods, nodes and configmaps")
	}
	d := cloudsync.NewDemand(cloudsync.DemandConfig{
		Pods: caches[pi], Nodes: caches[ni],
		Secrets:    cloudsync.DemandKind{Resource: res[si], Cache: caches[si]},
		ConfigMaps: cloudsync.DemandKind{Resource: res[ci], Cache: caches[ci]},
		Source: func(r cloudsync.Resource) cache.ListerWatcherWithContext {
			return cl.raw.ListerWatcher(r)
		},
		Discovery: cl.disc, Store: store, Link: link, Logger: log,
	})
	return d.Run, nil
}
