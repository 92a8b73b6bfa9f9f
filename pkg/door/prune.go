package door

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// StorePruner deletes the stored values under a key prefix that dead
// reports, and returns how many it deleted.
type StorePruner interface {
	PruneMeta(ctx context.Context, prefix string, dead func(value []byte) bool) (int, error)
}

// PruneStored deletes the stored token reviews and authorization decisions
// that can no longer be used at now, and returns how many. A stored entry
// serves only while the cloud cannot be asked, so it is past use when:
// a review's token expired, or, without an expiry, was reviewed more than
// offlineGrace ago; a decision is older than offlineGrace; or the entry is
// damaged. Entries of a bound token whose pod is gone are left to their
// expiry: a pod briefly missing from the cache must not lose its review.
func PruneStored(ctx context.Context, store StorePruner, now time.Time, offlineGrace time.Duration) (int, error) {
	reviews, err1 := store.PruneMeta(ctx, tokenKeyPrefix, func(raw []byte) bool {
		var e tokenEntry
		if json.Unmarshal(raw, &e) != nil || e.User.Name == "" {
			return true
		}
		if !e.Exp.IsZero() {
			return !now.Before(e.Exp)
		}
		return now.Sub(e.ReviewedAt) > offlineGrace
	})
	decisions, err2 := store.PruneMeta(ctx, decisionKeyPrefix, func(raw []byte) bool {
		var d decision
		return json.Unmarshal(raw, &d) != nil || d.At.IsZero() || now.Sub(d.At) > offlineGrace
	})
	return reviews + decisions, errors.Join(err1, err2)
}
