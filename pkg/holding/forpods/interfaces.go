package forpods

import (
	"context"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync"
	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"golang.org/x/oauth2"
)

// Store keeps the holdings' owners and removes a dropped resource.
// *metastore.Store satisfies it.
type Store interface {
	PutMeta(ctx context.Context, key string, value []byte) error
	GetMeta(ctx context.Context, key string) ([]byte, error)
	DeleteMeta(ctx context.Context, key string) error
	// Drop removes a resource's objects, event log and watermark.
	Drop(ctx context.Context, resource string) error
	// Scrub checkpoints and truncates the write-ahead log, so deleted rows
	// leave no copy on disk.
	Scrub(ctx context.Context) error
}

// Held is one resource that may be held for pods, and the cache local
// clients read it from.
type Held struct {
	Resource cloudsync.Resource
	Cache    *versioncache.Cache
	// Widens marks the whole copy of a resource the node's scope syncs in
	// part (Nodes, pods): the node's own identity keeps its partial view.
	Widens bool
}

// Minter requests a token for pod's service account, bound to pod, with
// the node's credentials; it returns the token and when it expires.
type Minter func(ctx context.Context, pod door.Pod) (token string, expires time.Time, err error)

// Syncer keeps h in sync with the cloud on tokens until ctx ends.
type Syncer func(ctx context.Context, h Held, tokens oauth2.TokenSource) error

// PodPresent reports whether the pod namespace/name with uid is on this
// node and not being deleted.
type PodPresent func(namespace, name, uid string) bool
