package offline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/requestinfo"
)

const (
	// maxMemDecisions bounds the decisions kept in memory (entries).
	maxMemDecisions = 8192
	// DefaultDecisionsPerIdentity is how many decisions one identity (a
	// user name and UID) may have stored: an informer-based client asks a
	// few dozen questions (get, list and watch of each resource and
	// namespace it reads), again for each rotated token, and at about 200
	// bytes a row a full quota costs about 400 KiB, so distinct questions
	// cannot fill the disk.
	DefaultDecisionsPerIdentity = 2048
	// identityHashBytes is how much of the identity's SHA-256 names its
	// decisions in the store (bytes): a prefix per identity.
	identityHashBytes = 16
)

// Decision is a SubjectAccessReview's answer.
type Decision struct {
	Allowed bool      `json:"allowed"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
	// Held marks a stored decision taken under the rule that only reads
	// of held resources are stored; a row without it is from before the
	// rule, and is pruned.
	Held bool `json:"held,omitempty"`
}

// DecisionsConfig wires Decisions.
type DecisionsConfig struct {
	Store Store
	Grace time.Duration
	// Held reports whether the daemon holds a's resource, so that it can
	// answer a from its own state offline; nil holds none (nothing is
	// stored).
	Held func(a requestinfo.Attributes) bool
	// PerIdentity is how many decisions one identity may have stored;
	// 0 is DefaultDecisionsPerIdentity.
	PerIdentity int
	Logger      *slog.Logger
}

// Decisions keeps authorization decisions: every one in memory, and in
// the store only an allowed get, list or watch of a resource the daemon
// holds (or a get of the discovery it serves), within a quota per
// identity. Other non-resource paths, subresources and resources only
// forwarded are never stored: offline they cannot be answered locally
// anyway.
type Decisions struct {
	*Memo[Decision]
	cfg DecisionsConfig
	mu  sync.Mutex
	// evicted is when each identity's stale decisions were last evicted;
	// guarded by mu.
	evicted map[string]time.Time
}

// NewDecisions returns an empty Decisions.
func NewDecisions(cfg DecisionsConfig) *Decisions {
	if cfg.PerIdentity <= 0 {
		cfg.PerIdentity = DefaultDecisionsPerIdentity
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := NewMemo(Policy[Decision]{Prefix: DecisionPrefix, Store: cfg.Store, MaxMem: maxMemDecisions, Grace: cfg.Grace,
		What: "authorization decision", Logger: cfg.Logger,
		Times: func(d Decision) (time.Time, time.Time) { return d.At, time.Time{} },
		Valid: func(d Decision) bool { return !d.At.IsZero() && d.Held }})
	return &Decisions{Memo: m, cfg: cfg, evicted: map[string]time.Time{}}
}

// DecisionKey names the question a by u: the identity's hash, then the
// whole question's. Same key, same question.
func DecisionKey(u caller.User, a requestinfo.Attributes) string {
	raw, _ := json.Marshal(struct {
		U caller.User
		A requestinfo.Attributes
	}{u, a}) // plain strings and maps: cannot fail
	sum := sha256.Sum256(raw)
	return identityKey(u) + "/" + hex.EncodeToString(sum[:])
}

// identityKey is the hash naming u's stored decisions: its name and UID,
// not the extras that change with each token (the credential id), so
// that one identity's quota holds across its tokens.
func identityKey(u caller.User) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(u.Name)) + ":" + u.Name + u.UID))
	return hex.EncodeToString(sum[:identityHashBytes])
}

// Remember keeps d in memory and, when the rules allow, in the store.
// Denials are never stored: offline they are answered as undecided (403)
// anyway.
func (z *Decisions) Remember(ctx context.Context, u caller.User, a requestinfo.Attributes, d Decision) {
	key := DecisionKey(u, a)
	if z.cfg.Store == nil || !d.Allowed || !z.storable(a) {
		z.Keep(key, d)
		return
	}
	if !z.withinQuota(ctx, u, key, d.At) {
		z.Keep(key, d)
		z.cfg.Logger.Debug("authorization decision not stored: the identity's quota is full", "user", u.Name)
		return
	}
	d.Held = true
	z.Memo.Remember(ctx, key, d)
}

// Retain stores u's allowed decision on a kept in memory only, if the
// rules allow it now (a's resource has come to be held since).
func (z *Decisions) Retain(ctx context.Context, u caller.User, a requestinfo.Attributes) {
	if d, ok := z.Mem(DecisionKey(u, a)); ok && d.Allowed && !d.Held {
		z.Remember(ctx, u, a, d)
	}
}

// storable is true for an allowed read the daemon can answer from its own
// state: get, list or watch of a held resource itself, or a get of a
// discovery path it serves (as Held says).
func (z *Decisions) storable(a requestinfo.Attributes) bool {
	if z.cfg.Held == nil || a.Subresource != "" {
		return false
	}
	if !a.ResourceRequest {
		return a.Verb == "get" && z.cfg.Held(a) // the discovery served offline
	}
	switch a.Verb {
	case "get", "list", "watch":
		return z.cfg.Held(a)
	}
	return false
}
