package door

import (
	"context"
	"errors"

	"github.com/apiserver-lite/apiserver-lite/pkg/door/satoken"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// LocalVerifier verifies the cloud's service-account tokens on the node
// (package satoken) before any TokenReview.
type LocalVerifier interface {
	// Verify authenticates a token bound to a pod this node holds; its
	// error wraps satoken.ErrNotLocal for a token to ask the cloud about,
	// satoken.ErrInvalid for one to refuse.
	Verify(ctx context.Context, token string, online bool) (satoken.Identity, error)
	// Learn is told each TokenReview the cloud answered: its audiences
	// and the service account's UID.
	Learn(ctx context.Context, username, uid string, audiences []string)
	// Ready reports whether keys, an issuer and an audience are known:
	// only then does a token it cannot verify get 401 while offline.
	Ready() bool
}

// verifyLocally authenticates token on the node when it can: done is
// false for a token the cloud must review. Offline, a token the verifier
// cannot verify is refused once the verifier is ready, without falling
// back to a stored review.
func (a *Authenticator) verifyLocally(ctx context.Context, token string) (u User, done bool, err error) {
	if a.cfg.Local == nil {
		return User{}, false, nil
	}
	online := a.cfg.Connected == nil || a.cfg.Connected()
	id, err := a.cfg.Local.Verify(ctx, token, online)
	switch {
	case err == nil:
		return User{Name: id.Name, UID: id.UID, Groups: id.Groups, Extra: id.Extra}, true, nil
	case errors.Is(err, satoken.ErrInvalid):
		a.cfg.Logger.Debug("service account token refused on the node", "err", err)
		return User{}, true, errUnauthenticated
	case !online && a.cfg.Local.Ready():
		a.cfg.Logger.Debug("service account token not verifiable on the node while offline", "err", err)
		return User{}, true, errUnauthenticated
	}
	a.cfg.Logger.Debug("token not verified on the node, asking the cloud", "err", err)
	return User{}, false, nil
}

// learnFromReview tells the local verifier what an authenticated review
// teaches.
func (a *Authenticator) learnFromReview(ctx context.Context, st authenticationv1.TokenReviewStatus) {
	if a.cfg.Local != nil {
		a.cfg.Local.Learn(ctx, st.User.Username, st.User.UID, st.Audiences)
	}
}
