package cloudsync

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// Store is the durable side of a sync. *metastore.Store satisfies it.
type Store interface {
	// Apply commits ops and the watermark in one transaction.
	Apply(ctx context.Context, resource string, ops []metastore.Op, watermark uint64) error
	// Reset replaces every object of resource and sets the watermark, even
	// a lower one, in one transaction.
	Reset(ctx context.Context, resource string, objs []metastore.Object, watermark uint64) error
	// Load returns the stored objects and watermark of resource.
	Load(ctx context.Context, resource string) ([]metastore.Object, uint64, error)
	// PutMeta stores opaque metadata, such as discovery information.
	PutMeta(ctx context.Context, key string, value []byte) error
}

// Cache is the side local clients read. *versioncache.Cache satisfies it.
type Cache interface {
	Ready() bool
	RV() uint64
	// Get returns the object at namespace/name, nil if absent.
	Get(namespace, name string) (*versioncache.Object, uint64, error)
	SetInfo(info versioncache.Info)
	Replace(objs []*versioncache.Object, rv uint64)
	Apply(events []versioncache.Event, rv uint64) error
}

// Discoverer looks up a group/version's resources in the cloud.
// discovery.DiscoveryInterface satisfies it.
type Discoverer interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// MetaStore keeps opaque metadata durably. *metastore.Store satisfies it.
type MetaStore interface {
	PutMeta(ctx context.Context, key string, value []byte) error
	// GetMeta returns metastore.ErrNotFound for a key never stored.
	GetMeta(ctx context.Context, key string) ([]byte, error)
}

// VersionFetcher asks the cloud for its version.
// discovery.DiscoveryInterface satisfies it.
type VersionFetcher interface {
	ServerVersion() (*version.Info, error)
}
