package offline

import (
	"context"
	"time"
)

// PruneExpired deletes the stored TokenRequest answers that expired by
// now (they are never replayed again) and the damaged ones, and returns
// how many.
func PruneExpired(ctx context.Context, store Pruner, now time.Time) (int, error) {
	return newTokenRequestMemo(nil, nil).Prune(ctx, store, now)
}
