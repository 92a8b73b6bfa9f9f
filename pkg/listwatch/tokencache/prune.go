package tokencache

import (
	"context"
	"encoding/json"
	"time"
)

// Pruner deletes the stored values under a key prefix that dead reports,
// and returns how many it deleted.
type Pruner interface {
	PruneMeta(ctx context.Context, prefix string, dead func(value []byte) bool) (int, error)
}

// PruneExpired deletes the stored TokenRequest answers that expired by
// now (they are never replayed again) and the damaged ones, and returns
// how many.
func PruneExpired(ctx context.Context, store Pruner, now time.Time) (int, error) {
	return store.PruneMeta(ctx, keyPrefix, expiredBy(now))
}

// expiredBy reports whether a stored answer is past use at now: expired,
// as replay sees it, or damaged.
func expiredBy(now time.Time) func(raw []byte) bool {
	return func(raw []byte) bool {
		var e entry
		return json.Unmarshal(raw, &e) != nil || !now.Before(e.Expires)
	}
}
