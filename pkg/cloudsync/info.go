package cloudsync

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// MetaPutter stores opaque metadata. Store and *metastore.Store satisfy
// it.
type MetaPutter interface {
	PutMeta(ctx context.Context, key string, value []byte) error
}

// DiscoverInfo looks r up in the cloud's discovery.
func DiscoverInfo(disc Discoverer, r Resource) (versioncache.Info, error) {
	list, err := disc.ServerResourcesForGroupVersion(r.GVR.GroupVersion().String())
	if err != nil {
		return versioncache.Info{}, err
	}
	for _, info := range list.APIResources {
		if info.Name == r.GVR.Resource {
			info.Group, info.Version = r.GVR.Group, r.GVR.Version
			return info, nil
		}
	}
	return versioncache.Info{}, fmt.Errorf("%w: %s", errNotServed, r.GVR)
}

// SaveInfo stores r's discovery information for offline restarts.
func SaveInfo(ctx context.Context, store MetaPutter, r Resource, info versioncache.Info) error {
	raw, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encode info: %w", err)
	}
	if err := store.PutMeta(ctx, r.InfoKey(), raw); err != nil {
		return fmt.Errorf("persist info: %w", err)
	}
	return nil
}
