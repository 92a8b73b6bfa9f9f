package door

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/utils/clock"

	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

const (
	// allowedTTL and deniedTTL are how long a decision is reused in memory,
	// the kubelet's webhook authorizer defaults.
	allowedTTL = 5 * time.Minute
	deniedTTL  = 30 * time.Second
	// DefaultOfflineAuthzGrace is how long a stored decision stands in for
	// the cloud's while the cloud cannot be asked.
	DefaultOfflineAuthzGrace = 24 * time.Hour
)

// errNoDecision is returned when the cloud cannot be asked and no earlier
// decision is recent enough.
var errNoDecision = errors.New("the cloud could not be asked and no recent decision is stored")

// AuthorizerConfig wires an Authorizer. Clock and Logger may be nil.
type AuthorizerConfig struct {
	Reviews      authorizationclient.SubjectAccessReviewInterface
	Store        DecisionStore
	Connected    Connected
	OfflineGrace time.Duration
	// Held reports whether the daemon holds a request's resource: only
	// decisions on those are stored (see offline.Decisions); nil stores
	// none.
	Held func(attributes) bool
	// DecisionsPerIdentity caps one identity's stored decisions; 0 is
	// offline.DefaultDecisionsPerIdentity.
	DecisionsPerIdentity int
	// Budget bounds the SubjectAccessReview bytes of each identity; nil is
	// no bound.
	Budget *ReviewBudget
	Clock  clock.PassiveClock
	Logger *slog.Logger
}

// Authorizer decides with SubjectAccessReviews against the cloud.
type Authorizer struct {
	cfg       AuthorizerConfig
	decisions *offline.Decisions
	// flight shares one review among the requests of one decision key.
	flight singleflight.Group
}

// decision is a SubjectAccessReview's answer.
type decision = offline.Decision

// NewAuthorizer returns an Authorizer.
func NewAuthorizer(cfg AuthorizerConfig) *Authorizer {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Authorizer{cfg: cfg, decisions: offline.NewDecisions(offline.DecisionsConfig{Store: cfg.Store,
		Grace: cfg.OfflineGrace, Held: cfg.Held, PerIdentity: cfg.DecisionsPerIdentity, Logger: cfg.Logger})}
}

// authorize decides whether u may do a. Stored decisions stand in for the
// cloud's only while the link reports it down; an error from a reachable
// cloud refuses the request.
func (z *Authorizer) authorize(ctx context.Context, u User, a attributes) (decision, error) {
	a = normalized(a)
	key := offline.DecisionKey(u, a)
	now := z.cfg.Clock.Now()
	d, ok := z.decisions.Mem(key)
	if ok && now.Sub(d.At) < ttl(d) {
		return d, nil
	}
	if z.cfg.Connected == nil || z.cfg.Connected() {
		d, err := z.decide(ctx, key, u, a, now)
		if err != nil {
			if apierrors.IsTooManyRequests(err) {
				return decision{}, fmt.Errorf("%w: %w", errCloudBusy, err)
			}
			return decision{}, fmt.Errorf("subject access review: %w", err)
		}
		return d, nil
	}
	if !ok {
		d, ok = z.decisions.Stored(ctx, key)
	}
	if !ok || !z.decisions.InGrace(d, now) {
		return decision{}, errNoDecision
	}
	return d, nil
}

// decide asks the cloud for key's decision and remembers it, once for
// every request of key that arrives before the answer: one review is
// asked and charged to the identity's budget, however many of its
// requests (450 watches opened at once, say) missed the memory together.
func (z *Authorizer) decide(ctx context.Context, key string, u User, a attributes, now time.Time) (decision, error) {
	v, err, _ := z.flight.Do(key, func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
		defer cancel()
		d, err := z.askCloud(rctx, u, a, now)
		if err != nil {
			return decision{}, err
		}
		z.decisions.Remember(rctx, u, a, d)
		if d.Allowed {
			z.askSibling(rctx, u, a, now)
		}
		return d, nil
	})
	if err != nil {
		return decision{}, err
	}
	return v.(decision), nil
}

// retain stores the allowed decisions in memory on a and its sibling
// verb that were not stored when taken because nothing held a's resource
// then: a pod's read that starts a holding is decided before the holding
// exists.
func (z *Authorizer) retain(ctx context.Context, u User, a attributes) {
	a = normalized(a)
	z.decisions.Retain(ctx, u, a)
	if verb, ok := siblingVerbs[a.Verb]; ok {
		a.Verb = verb
		z.decisions.Retain(ctx, u, a)
	}
}

// siblingVerbs pair list and watch. An informer asks "watch" online
// (WatchList) but falls back to a LIST when it starts again offline, a
// question never asked; so while the cloud can answer, an allowed list or
// watch also asks its sibling, and offline both are on record.
var siblingVerbs = map[string]string{"list": "watch", "watch": "list"}

// askSibling asks and remembers the sibling question of an allowed a,
// unless a fresh answer is in memory. Its failure only costs the offline
// fallback, so it is logged.
func (z *Authorizer) askSibling(ctx context.Context, u User, a attributes, now time.Time) {
	verb, ok := siblingVerbs[a.Verb]
	if !ok {
		return
	}
	a.Verb = verb
	d, ok := z.decisions.Mem(offline.DecisionKey(u, a))
	if ok && now.Sub(d.At) < ttl(d) {
		return
	}
	d, err := z.askCloud(ctx, u, a, now)
	if err != nil {
		z.cfg.Logger.Debug("subject access review of the sibling verb", "verb", verb, "err", err)
		return
	}
	z.decisions.Remember(ctx, u, a, d)
}

func ttl(d decision) time.Duration {
	if d.Allowed {
		return allowedTTL
	}
	return deniedTTL
}

func (z *Authorizer) askCloud(ctx context.Context, u User, a attributes, now time.Time) (decision, error) {
	if len(a.Path) > maxReviewedPathBytes {
		return decision{Reason: "the request path is too long to review", At: now}, nil
	}
	sar := accessReview(u, a)
	raw, err := json.Marshal(sar)
	if err != nil {
		return decision{}, fmt.Errorf("encode subject access review: %w", err)
	}
	if err := z.cfg.Budget.allowAccessReview(u.Name, len(raw)); err != nil {
		return decision{}, err
	}
	out, err := z.cfg.Reviews.Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return decision{}, err
	}
	return decision{Allowed: out.Status.Allowed && !out.Status.Denied, Reason: out.Status.Reason, At: now}, nil
}
