package door

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/utils/clock"
)

const (
	// allowedTTL and deniedTTL are how long a decision is reused in memory,
	// the kubelet's webhook authorizer defaults.
	allowedTTL = 5 * time.Minute
	deniedTTL  = 30 * time.Second
	// DefaultOfflineAuthzGrace is how long a stored decision stands in for
	// the cloud's while the cloud cannot be asked.
	DefaultOfflineAuthzGrace = 24 * time.Hour
	// maxCachedDecisions bounds the in-memory decision cache (entries).
	maxCachedDecisions = 8192
	// decisionKeyPrefix prefixes the store keys of decisions.
	decisionKeyPrefix = "auth/decision/"
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
	// Budget bounds the SubjectAccessReview bytes of each identity; nil is
	// no bound.
	Budget *ReviewBudget
	Clock  clock.PassiveClock
	Logger *slog.Logger
}

// Authorizer decides with SubjectAccessReviews against the cloud.
type Authorizer struct {
	cfg AuthorizerConfig
	mu  sync.Mutex
	mem map[string]decision // guarded by mu; keyed by decisionKey
}

// decision is a SubjectAccessReview's answer.
type decision struct {
	Allowed bool      `json:"allowed"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

// NewAuthorizer returns an Authorizer.
func NewAuthorizer(cfg AuthorizerConfig) *Authorizer {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Authorizer{cfg: cfg, mem: map[string]decision{}}
}

// authorize decides whether u may do a. Stored decisions stand in for the
// cloud's only while the link reports it down; an error from a reachable
// cloud refuses the request.
func (z *Authorizer) authorize(ctx context.Context, u User, a attributes) (decision, error) {
	a = normalized(a)
	key := decisionKey(u, a)
	now := z.cfg.Clock.Now()
	z.mu.Lock()
	d, ok := z.mem[key]
	z.mu.Unlock()
	if ok && now.Sub(d.At) < ttl(d) {
		return d, nil
	}
	if z.cfg.Connected == nil || z.cfg.Connected() {
		d, err := z.askCloud(ctx, u, a, now)
		if err != nil {
			if apierrors.IsTooManyRequests(err) {
				return decision{}, fmt.Errorf("%w: %w", errCloudBusy, err)
			}
			return decision{}, fmt.Errorf("subject access review: %w", err)
		}
		z.remember(ctx, key, a, d)
		if d.Allowed {
			z.askSibling(ctx, u, a, now)
		}
		return d, nil
	}
	if !ok {
		d, ok = z.stored(ctx, key)
	}
	if !ok || now.Sub(d.At) > z.cfg.OfflineGrace {
		return decision{}, errNoDecision
	}
	return d, nil
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
	key := decisionKey(u, a)
	z.mu.Lock()
	d, ok := z.mem[key]
	z.mu.Unlock()
	if ok && now.Sub(d.At) < ttl(d) {
		return
	}
	d, err := z.askCloud(ctx, u, a, now)
	if err != nil {
		z.cfg.Logger.Debug("subject access review of the sibling verb", "verb", verb, "err", err)
		return
	}
	z.remember(ctx, key, a, d)
}

func ttl(d decision) time.Duration {
	if d.Allowed {
		return allowedTTL
	}
	return deniedTTL
}

// decisionKey hashes the user and the attributes: same key, same question.
func decisionKey(u User, a attributes) string {
	raw, _ := json.Marshal(struct {
		U User
		A attributes
	}{u, a}) // plain strings and maps: cannot fail
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
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

func (z *Authorizer) stored(ctx context.Context, key string) (decision, bool) {
	if z.cfg.Store == nil {
		return decision{}, false
	}
	raw, ok, err := z.cfg.Store.Get(ctx, decisionKeyPrefix+key)
	if err != nil || !ok {
		return decision{}, false
	}
	var d decision
	if err := json.Unmarshal(raw, &d); err != nil || d.At.IsZero() {
		return decision{}, false
	}
	return d, true
}

// remember keeps d in memory and, for an allowed read the daemon can
// answer offline, in the store. Denials are never stored: offline they
// are answered as undecided (403) anyway, and storing them would let any
// caller fill the disk with distinct questions. A store failure only
// costs the offline fallback, so it is logged.
func (z *Authorizer) remember(ctx context.Context, key string, a attributes, d decision) {
	z.mu.Lock()
	if len(z.mem) >= maxCachedDecisions {
		clear(z.mem)
	}
	z.mem[key] = d
	z.mu.Unlock()
	if z.cfg.Store == nil || !d.Allowed || !servableOffline(a) {
		return
	}
	raw, err := json.Marshal(d)
	if err == nil {
		err = z.cfg.Store.Put(ctx, decisionKeyPrefix+key, raw)
	}
	if err != nil {
		z.cfg.Logger.Warn("store authorization decision", "err", err)
	}
}

// servableOffline is true for the reads the daemon may answer from its
// own state: get, list and watch of a resource, and the discovery and
// version paths.
func servableOffline(a attributes) bool {
	switch a.Verb {
	case "get", "list", "watch":
		return true
	}
	return false
}
