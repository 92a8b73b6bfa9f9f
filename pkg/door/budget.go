package door

import (
	"context"
	"errors"
	"math"
	"sync"

	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

const (
	// tokenReviewQPSPerSource and tokenReviewBurstPerSource budget the
	// TokenReviews the requests of one remote address may cost: forged
	// tokens from one source cannot spend the review client's rate for
	// every other caller's valid tokens (requests per second, requests).
	tokenReviewQPSPerSource   = 10
	tokenReviewBurstPerSource = 20
	// accessReviewBytesPerIdentity and accessReviewBurstBytes budget the
	// SubjectAccessReview bytes one identity's requests may cost (bytes a
	// second, bytes): a caller chooses its paths and selectors, and pays
	// for them itself.
	accessReviewBytesPerIdentity = 64 << 10
	accessReviewBurstBytes       = 256 << 10
	// maxBudgetKeys bounds the sources and identities a budget tracks; it
	// is emptied when full, which only refills their buckets.
	maxBudgetKeys = 4096
)

// errReviewBudget is returned when a review would exceed a budget: the
// caller is answered 429 with Retry-After, never 401.
var errReviewBudget = errors.New("review budget spent")

// budgetError is errReviewBudget with its reason and retry delay.
type budgetError struct {
	msg        string
	retryAfter int // seconds
}

func (e *budgetError) Error() string        { return e.msg }
func (e *budgetError) Is(target error) bool { return target == errReviewBudget }

// retryAfterOfBudget is err's retry delay in seconds, at least
// retryAfterSeconds.
func retryAfterOfBudget(err error) int {
	var be *budgetError
	if errors.As(err, &be) && be.retryAfter > retryAfterSeconds {
		return be.retryAfter
	}
	return retryAfterSeconds
}

// ReviewBudget is what the doors' reviews may cost: TokenReviews per
// source and in all, SubjectAccessReview bytes per identity and
// SubjectAccessReviews in all. A spent budget never waits: the review
// client's own rate limit is off (see NewReviewClients), so no request
// holds a slot waiting for it.
type ReviewBudget struct {
	clock  clock.PassiveClock // immutable
	tokens *rate.Limiter      // every TokenReview
	access *rate.Limiter      // every SubjectAccessReview

	mu         sync.Mutex
	sources    map[string]*rate.Limiter // guarded by mu; TokenReviews per remote IP
	identities map[string]*rate.Limiter // guarded by mu; SubjectAccessReview bytes per user
}

// NewReviewBudget returns a budget timed by clk (nil: the real clock).
func NewReviewBudget(clk clock.PassiveClock) *ReviewBudget {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &ReviewBudget{clock: clk, tokens: rate.NewLimiter(reviewQPS, reviewBurst),
		access: rate.NewLimiter(reviewQPS, reviewBurst), sources: map[string]*rate.Limiter{},
		identities: map[string]*rate.Limiter{}}
}

// allowTokenReview spends one TokenReview of source, or returns a
// budgetError. A nil budget allows everything.
func (b *ReviewBudget) allowTokenReview(source string) error {
	if b == nil {
		return nil
	}
	per := b.keyed(b.sources, source, tokenReviewQPSPerSource, tokenReviewBurstPerSource)
	if err := b.take(per, 1, "too many token reviews from this address, please try again later"); err != nil {
		return err
	}
	return b.take(b.tokens, 1, "too many token reviews, please try again later")
}

// allowAccessReview spends size bytes of identity's SubjectAccessReview
// budget and one review of the door's, or returns a budgetError.
func (b *ReviewBudget) allowAccessReview(identity string, size int) error {
	if b == nil {
		return nil
	}
	per := b.keyed(b.identities, identity, accessReviewBytesPerIdentity, accessReviewBurstBytes)
	if err := b.take(per, size, "too many authorization review bytes for this client, please try again later"); err != nil {
		return err
	}
	return b.take(b.access, 1, "too many authorization reviews, please try again later")
}

// take spends n of lim now or returns a budgetError with the delay after
// which it could.
func (b *ReviewBudget) take(lim *rate.Limiter, n int, msg string) error {
	now := b.clock.Now()
	n = min(n, lim.Burst()) // a review larger than the burst costs a full bucket
	r := lim.ReserveN(now, n)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &budgetError{msg: msg, retryAfter: int(math.Ceil(d.Seconds()))}
	}
	return nil
}

// keyed is key's limiter in m, created full.
func (b *ReviewBudget) keyed(m map[string]*rate.Limiter, key string, perSecond float64, burst int) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	lim, ok := m[key]
	if !ok {
		if len(m) >= maxBudgetKeys {
			clear(m)
		}
		lim = rate.NewLimiter(rate.Limit(perSecond), burst)
		m[key] = lim
	}
	return lim
}

type sourceKey struct{}

// withSource records the remote IP a request came from.
func withSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, sourceKey{}, source)
}

func sourceFrom(ctx context.Context) string {
	s, _ := ctx.Value(sourceKey{}).(string)
	return s
}
