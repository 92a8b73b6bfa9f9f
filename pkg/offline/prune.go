package offline

import (
	"context"
	"errors"
	"time"
)

// PruneStored deletes the stored token reviews, authorization decisions
// and get-only answers that can no longer be used at now, and returns how
// many. A stored answer serves only while the cloud cannot be asked, so it
// is past use when: a review's token expired, or, without an expiry, was
// reviewed more than offlineGrace ago; a decision is older than
// offlineGrace or predates the rule that only held resources' are stored;
// a get-only answer was not refreshed for getOnlyRetention or predates the
// rule that only the node's are stored; or the entry is damaged.
func PruneStored(ctx context.Context, store Pruner, now time.Time, offlineGrace time.Duration) (int, error) {
	reviews, err1 := NewReviews(nil, offlineGrace, Policy[Review]{}).Prune(ctx, store, now)
	decisions, err2 := NewDecisions(DecisionsConfig{Grace: offlineGrace}).Prune(ctx, store, now)
	answers, err3 := newGetOnlyMemo(nil, nil).Prune(ctx, store, now)
	return reviews + decisions + answers, errors.Join(err1, err2, err3)
}
