package offline

import (
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

// maxMemReviews bounds the reviewed and the refused tokens kept in memory
// (entries each); a full memory is emptied, which only costs fresh
// reviews.
const maxMemReviews = 4096

// Review is a successful TokenReview, as kept in memory and the store
// under ReviewPrefix and the token's SHA-256 (never the token).
type Review struct {
	User caller.User `json:"user"`
	// Exp is the token's expiry; zero when it has none.
	Exp time.Time `json:"exp"`
	// Pod is the pod the token is bound to; empty when none.
	Pod        PodRef    `json:"pod"`
	ReviewedAt time.Time `json:"reviewedAt"`
}

// PodRef names a bound pod.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// NewReviews returns the memo of reviewed tokens: usable offline until
// the token's exp, or without one for grace after the review; pruned
// after that. A bound token whose pod is gone is left to its expiry: a
// pod briefly missing from the cache must not lose its review.
func NewReviews(store Store, grace time.Duration, p Policy[Review]) *Memo[Review] {
	p.Prefix, p.Store, p.MaxMem, p.Grace, p.What = ReviewPrefix, store, maxMemReviews, grace, "token review"
	p.Times = func(r Review) (time.Time, time.Time) { return r.ReviewedAt, r.Exp }
	p.Valid = func(r Review) bool { return r.User.Name != "" }
	return NewMemo(p)
}

// NewRefusals returns the memory-only memo of tokens the cloud refused,
// with when: a forged token sent in a loop costs one review per TTL.
func NewRefusals() *Memo[time.Time] {
	return NewMemo(Policy[time.Time]{MaxMem: maxMemReviews, What: "token refusal",
		Times: func(at time.Time) (time.Time, time.Time) { return at, time.Time{} }})
}
