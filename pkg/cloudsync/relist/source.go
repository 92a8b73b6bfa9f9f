package relist

import (
	"context"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Source serves a lean relist: the metadata of a resource's objects, and
// single objects as they were at an exact resourceVersion.
type Source interface {
	// ListMeta lists the metadata of the resource's objects, narrowed as
	// its full list is.
	ListMeta(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
	// GetAt returns the object namespace/name as it was at resourceVersion
	// rv, in the form a full list stores it; nil if it did not exist then
	// or did not match the resource's selectors.
	GetAt(ctx context.Context, namespace, name string, rv uint64) (*versioncache.Object, error)
}

// KeyStore is a store a lean relist can diff against: it reads the stored
// keys without the objects' bytes. *metastore.Store satisfies it.
type KeyStore interface {
	Keys(ctx context.Context, resource string) ([]metastore.Key, uint64, error)
	Objects(ctx context.Context, resource string, names []metastore.Name) ([]metastore.Object, error)
}
