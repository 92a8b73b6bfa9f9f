package door

import (
	"context"
	"time"
)

// The Authenticator's reviews and refusals are kept by package offline;
// these name what the token path asks of them.

func (a *Authenticator) memEntry(key string) (tokenEntry, bool) { return a.reviews.Mem(key) }

// storedEntry reads a review from the store; a damaged record counts as
// absent.
func (a *Authenticator) storedEntry(ctx context.Context, key string) (tokenEntry, bool) {
	return a.reviews.Stored(ctx, key)
}

// remember keeps a successful review in memory and in the store.
func (a *Authenticator) remember(ctx context.Context, key string, e tokenEntry) {
	a.reviews.Remember(ctx, key, e)
}

// forget drops a token the cloud no longer accepts.
func (a *Authenticator) forget(ctx context.Context, key string) { a.reviews.Forget(ctx, key) }

// refusedRecently is true for a token the cloud refused within
// failedTokenTTL.
func (a *Authenticator) refusedRecently(key string, now time.Time) bool {
	at, ok := a.refused.Mem(key)
	return ok && now.Sub(at) < failedTokenTTL
}

func (a *Authenticator) noteRefused(key string, now time.Time) { a.refused.Keep(key, now) }
