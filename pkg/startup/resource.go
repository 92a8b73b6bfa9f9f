package startup

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names what LoadCaches loads for one synced resource.
type Resource struct {
	GVR schema.GroupVersionResource
	// Key is the resource's key in the store; InfoKey the meta key of its
	// discovery information.
	Key, InfoKey string
}

// Store is what LoadCaches reads. *metastore.Store satisfies it.
type Store interface {
	// LoadSnapshot returns a resource's objects, watermark and event log.
	LoadSnapshot(ctx context.Context, resource string) (metastore.Snapshot, error)
	// GetMeta returns metastore.ErrNotFound for a key never stored.
	GetMeta(ctx context.Context, key string) ([]byte, error)
}
