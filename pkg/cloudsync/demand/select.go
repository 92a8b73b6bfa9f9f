package demand

import (
	"errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// ErrMissingDependency is returned by Select for on-demand secrets without
// the pods, node and configmaps whose references decide what is held.
var ErrMissingDependency = errors.New("on-demand secrets need pods, nodes and configmaps")

// Select fills cfg's caches and kinds from the synced resources res (and
// their caches, in res's order): on-demand secrets are held by reference
// only when res has them, with the node's pods, its Node and configmaps,
// which the references come from. It reports false when res has no
// on-demand secrets, so nothing is held by reference.
func Select(cfg Config, res []cloudsync.Resource, caches []*versioncache.Cache) (Config, bool, error) {
	at := map[string]int{}
	for i, r := range res {
		// A whole copy held for the node's pods is not the node's own.
		if r.GVR.Group == "" && r.GVR.Version == "v1" && !r.ForPods {
			at[r.GVR.Resource] = i
		}
	}
	si, hasSecrets := at["secrets"]
	if !hasSecrets || !res[si].OnDemand {
		return cfg, false, nil
	}
	ci, hasConfigMaps := at["configmaps"]
	pi, hasPods := at["pods"]
	ni, hasNodes := at["nodes"]
	if !hasConfigMaps || !hasPods || !hasNodes {
		return cfg, false, ErrMissingDependency
	}
	cfg.Pods, cfg.Nodes = caches[pi], caches[ni]
	cfg.Secrets = Kind{Resource: res[si], Cache: caches[si]}
	cfg.ConfigMaps = Kind{Resource: res[ci], Cache: caches[ci]}
	return cfg, true, nil
}
