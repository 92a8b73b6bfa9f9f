package atrest

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// storedPruneInterval spaces the removals of stored credentials past use:
// hourly, as projected tokens rotate about hourly; an entry past use only
// costs disk until then, and is never served.
const storedPruneInterval = time.Hour

// StoredPruner removes, at start and every storedPruneInterval, the stored
// token reviews, authorization decisions, get-only answers and TokenRequest
// answers that can no longer be used (see offline.PruneStored and
// offline.PruneExpired),
// then scrubs their bytes from the disk.
func StoredPruner(store *metastore.Store, tokens offline.Pruner, clk clock.WithTicker, grace time.Duration, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		t := clk.NewTicker(storedPruneInterval)
		defer t.Stop()
		for {
			if err := pruneStored(ctx, store, tokens, clk.Now(), grace, log); err != nil && ctx.Err() == nil {
				// The next round retries; a prune only saves disk.
				log.Warn("prune stored credentials", "err", err)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C():
			}
		}
	}
}

// pruneStored runs one round of StoredPruner.
func pruneStored(ctx context.Context, store *metastore.Store, tokens offline.Pruner, now time.Time, grace time.Duration, log *slog.Logger) error {
	reviews, err1 := offline.PruneStored(ctx, store, now, grace)
	answers, err2 := offline.PruneExpired(ctx, tokens, now)
	if reviews+answers == 0 {
		return errors.Join(err1, err2)
	}
	log.Info("pruned stored credentials past use", "reviewsDecisionsAndGetOnlyAnswers", reviews, "tokenAnswers", answers)
	return errors.Join(err1, err2, store.Scrub(ctx))
}
