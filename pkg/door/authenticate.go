package door

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

const (
	// tokenCacheTTL is how long a successful TokenReview is reused in
	// memory while online, kube-apiserver's webhook token cache default.
	tokenCacheTTL = 2 * time.Minute
	// failedTokenTTL is how long a token the cloud refused is refused
	// without asking again, kube-apiserver's webhook token cache default
	// for failures: a forged token sent in a loop costs one review.
	failedTokenTTL = 10 * time.Second
	// reviewTimeout bounds one TokenReview; it is shared by every request
	// waiting for the same token.
	reviewTimeout = 10 * time.Second
	// nodesGroup is the group of every node identity.
	nodesGroup = "system:nodes"
	// nodeUserPrefix prefixes a node's user name.
	nodeUserPrefix = "system:node:"
)

// errUnauthenticated is returned for a request with no valid credentials.
var errUnauthenticated = errors.New("unauthenticated")

// errCloudBusy wraps a cloud's 429 to a review: the caller is asked to
// retry (503 with Retry-After) rather than told its credentials are bad.
var errCloudBusy = errors.New("the cloud is overloaded and could not review the request")

// AuthenticatorConfig wires an Authenticator. Clock and Logger may be nil.
type AuthenticatorConfig struct {
	// NodeName is this node: system:node:<NodeName> gets the loopback
	// door's rights.
	NodeName string
	Reviews  authenticationclient.TokenReviewInterface
	Store    DecisionStore
	// Pods finds a bound token's pod in the local cache (offline check).
	Pods      PodLookup
	Connected Connected
	// OfflineGrace bounds the offline use of a reviewed token without exp.
	OfflineGrace time.Duration
	// Local verifies service-account tokens on the node before any
	// review; nil reviews every token.
	Local LocalVerifier
	// Audiences are the audiences a reviewed token must have (TokenReview
	// spec.audiences); empty: the cloud's API audiences. The pool door
	// names the pool's, so no token it reviews is a cloud credential.
	Audiences []string
	// Budget bounds the TokenReviews of each source; nil is no bound.
	Budget *ReviewBudget
	Clock  clock.PassiveClock
	Logger *slog.Logger
}

// Authenticator authenticates the doors' requests. Stored reviews stand
// in for the cloud's only while the link reports the cloud down: a review
// that fails while the cloud is up refuses the request.
type Authenticator struct {
	cfg AuthenticatorConfig
	// flight shares one TokenReview among the requests of one token.
	flight singleflight.Group
	// reviews keeps successful reviews, keyed by the token's SHA-256.
	reviews *offline.Memo[tokenEntry]
	// refused keeps when a token was refused, by the same key.
	refused *offline.Memo[time.Time]
}

// tokenEntry is a successful review, as kept in memory and the store.
type tokenEntry = offline.Review

// NewAuthenticator returns an Authenticator.
func NewAuthenticator(cfg AuthenticatorConfig) *Authenticator {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Authenticator{cfg: cfg, refused: offline.NewRefusals(),
		reviews: offline.NewReviews(cfg.Store, cfg.OfflineGrace, offline.Policy[tokenEntry]{Logger: cfg.Logger})}
}

// authenticate returns the caller: a verified client certificate first,
// then a bearer token, as kube-apiserver orders them.
func (a *Authenticator) authenticate(r *http.Request) (requester, error) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.PeerCertificates) > 0 {
		subj := r.TLS.PeerCertificates[0].Subject
		u := User{Name: subj.CommonName, Groups: append(slices.Clone(subj.Organization), "system:authenticated")}
		if u.Name == "" {
			return requester{}, errUnauthenticated
		}
		return requester{user: u, node: a.isNode(u)}, nil
	}
	token, ok := bearerToken(r)
	if !ok {
		return requester{}, errUnauthenticated
	}
	// Service-account tokens of the node's own pods: verified here, no
	// review (authenticate_local.go).
	if u, done, err := a.verifyLocally(r.Context(), token); done && err != nil {
		return requester{}, err
	} else if done {
		return requester{user: u, token: token}, nil
	}
	e, err := a.reviewToken(r.Context(), token)
	if err != nil {
		return requester{}, err
	}
	return requester{user: e.User, token: token, node: a.isNode(e.User)}, nil
}

func (a *Authenticator) isNode(u User) bool {
	return a.cfg.NodeName != "" && u.Name == nodeUserPrefix+a.cfg.NodeName && slices.Contains(u.Groups, nodesGroup)
}

// bearerToken is the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != "" && len(token) <= maxTokenBytes
}

func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// reviewToken asks the cloud, or while the link reports it down, reuses an
// earlier successful review within the token's lifetime.
func (a *Authenticator) reviewToken(ctx context.Context, token string) (tokenEntry, error) {
	key := tokenKey(token)
	now := a.cfg.Clock.Now()
	if e, ok := a.memEntry(key); ok && now.Sub(e.ReviewedAt) < tokenCacheTTL && a.usable(e, now) {
		return e, nil
	}
	if a.refusedRecently(key, now) {
		return tokenEntry{}, errUnauthenticated
	}
	if a.cfg.Connected == nil || a.cfg.Connected() {
		return a.reviewOnline(ctx, key, token, now)
	}
	return a.reviewOffline(ctx, key, now)
}

// reviewOnline asks the cloud once for every request waiting on key. Any
// error but the cloud's 429 refuses the request: a stored review is never
// used while the cloud is up, so an attacker on the network cannot force
// the offline rules by breaking reviews.
func (a *Authenticator) reviewOnline(ctx context.Context, key, token string, now time.Time) (tokenEntry, error) {
	v, err, _ := a.flight.Do(key, func() (any, error) {
		// Only the review actually asked is charged to its source's budget.
		if err := a.cfg.Budget.allowTokenReview(sourceFrom(ctx)); err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
		defer cancel()
		return a.askCloud(rctx, key, token, now)
	})
	switch {
	case err == nil:
		return v.(tokenEntry), nil
	case errors.Is(err, errReviewBudget):
		return tokenEntry{}, err
	case errors.Is(err, errUnauthenticated):
		a.noteRefused(key, now)
		return tokenEntry{}, err
	case apierrors.IsTooManyRequests(err):
		return tokenEntry{}, fmt.Errorf("%w: %w", errCloudBusy, err)
	}
	a.cfg.Logger.Info("token review failed while the cloud is reachable, refusing the request", "err", err)
	return tokenEntry{}, errUnauthenticated
}

// reviewOffline reuses a stored review while the cloud is down.
func (a *Authenticator) reviewOffline(ctx context.Context, key string, now time.Time) (tokenEntry, error) {
	e, ok := a.memEntry(key)
	if !ok {
		if e, ok = a.storedEntry(ctx, key); !ok {
			return tokenEntry{}, errUnauthenticated
		}
	}
	if !a.usable(e, now) || !a.reviews.InGrace(e, now) {
		return tokenEntry{}, errUnauthenticated
	}
	return e, nil
}

// usable is false for an expired token or one whose bound pod is no longer
// in the local cache or is being deleted.
func (a *Authenticator) usable(e tokenEntry, now time.Time) bool {
	if !e.Exp.IsZero() && !now.Before(e.Exp) {
		return false
	}
	if e.Pod.UID != "" && (a.cfg.Pods == nil || !a.cfg.Pods(e.Pod.Namespace, e.Pod.Name, e.Pod.UID)) {
		return false
	}
	return true
}

// askCloud creates a TokenReview and records its answer.
func (a *Authenticator) askCloud(ctx context.Context, key, token string, now time.Time) (tokenEntry, error) {
	tr, err := a.cfg.Reviews.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: a.cfg.Audiences}}, metav1.CreateOptions{})
	if err != nil {
		return tokenEntry{}, err
	}
	if !tr.Status.Authenticated || tr.Status.User.Username == "" {
		a.forget(ctx, key)
		return tokenEntry{}, errUnauthenticated
	}
	a.learnFromReview(ctx, tr.Status)
	e := tokenEntry{User: userOf(tr.Status.User), ReviewedAt: now}
	if c, err := parseClaims(token); err == nil {
		e.Exp, e.Pod = c.Exp, c.Pod
	}
	a.remember(ctx, key, e)
	return e, nil
}

func userOf(u authenticationv1.UserInfo) User {
	out := User{Name: u.Username, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		out.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			out.Extra[k] = v
		}
	}
	return out
}
