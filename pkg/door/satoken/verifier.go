package satoken

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
	"k8s.io/utils/clock"
)

const (
	// keyRetryInterval is how soon Run tries again while no key was
	// ever read (the link or the node's pods are not up yet).
	keyRetryInterval = 10 * time.Second
	// keyRefreshInterval is how often the signing keys are read again
	// while online: kube publishes a new key at least this long (its
	// discovery max-age, 3600 s) before it signs with it.
	keyRefreshInterval = time.Hour
	// unknownKeyRefreshInterval is the least time between two refreshes
	// caused by tokens naming a key not held: a flood of such tokens costs
	// the cloud one read of the keys per interval.
	unknownKeyRefreshInterval = time.Minute
	// serviceAccountRecheck is how long a ServiceAccount's UID read from
	// the cloud is trusted online before it is read again (lazily, when a
	// token of that ServiceAccount is verified).
	serviceAccountRecheck = 10 * time.Minute
	// fetchTimeout bounds one read of the keys or of a ServiceAccount.
	fetchTimeout = 10 * time.Second
	// maxAudiences bounds the learnt API audiences kept (entries).
	maxAudiences = 16
	// maxServiceAccounts bounds the ServiceAccount UIDs kept in memory
	// (entries); the map is emptied when full, which only costs reads.
	maxServiceAccounts = 4096
)

// Sentinels callers branch on.
var (
	// ErrNotLocal is returned for a token this node cannot verify: ask
	// the cloud while it is up, refuse it while offline.
	ErrNotLocal = errors.New("token cannot be verified on the node")
	// ErrInvalid is returned for a token kube's authenticator would
	// refuse: refuse it without asking the cloud.
	ErrInvalid = errors.New("invalid service account token")
	// ErrPodNotFound is returned by a PodGetter for a pod it does not
	// hold.
	ErrPodNotFound = errors.New("pod not found")
)

// Published is what the cloud publishes about its service-account
// tokens on the kubeconfig's server.
type Published struct {
	// Issuer is the discovery document's issuer (the first
	// --service-account-issuer).
	Issuer string
	// JWKS is /openid/v1/jwks, a JSON Web Key Set of public keys.
	JWKS []byte
	// Audiences are API audiences learnt on the way (a token minted
	// with the cloud's default audiences); may be empty.
	Audiences []string
}

// Fetcher reads what the cloud publishes.
type Fetcher func(ctx context.Context) (Published, error)

// Pod is what the verifier needs of a bound pod.
type Pod struct {
	UID               string
	DeletionTimestamp *time.Time
}

// PodGetter finds a pod the node holds: ErrPodNotFound (wrapped) when it
// holds none by that name, any other error when it cannot tell (its pods
// are not synced yet).
type PodGetter func(namespace, name string) (Pod, error)

// ServiceAccount is what the verifier needs of a ServiceAccount.
type ServiceAccount struct {
	UID               string
	DeletionTimestamp *time.Time
}

// ServiceAccountGetter reads a ServiceAccount from the cloud.
type ServiceAccountGetter func(ctx context.Context, namespace, name string) (ServiceAccount, error)

// Store keeps what the verifier learnt (public keys, the issuer, the API
// audiences, ServiceAccount UIDs) across restarts.
type Store interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Put(ctx context.Context, key string, value []byte) error
}

// Config wires a Verifier. Clock and Logger may be nil; so may Fetch,
// ServiceAccounts and Store (less is then verified locally).
type Config struct {
	// NodeName is this node: a token whose node claim names another node
	// is not verified here.
	NodeName string
	// Issuer is the cloud's service-account issuer; empty reads it from
	// the cloud's discovery document.
	Issuer string
	// Audiences are the cloud's --api-audiences; empty learns them from
	// TokenReviews' status.audiences (Learn).
	Audiences       []string
	Fetch           Fetcher
	Pods            PodGetter
	ServiceAccounts ServiceAccountGetter
	Store           Store
	Clock           clock.WithTicker
	Logger          *slog.Logger
}

// Verifier verifies service-account tokens locally.
type Verifier struct {
	cfg Config
	// refreshMu serialises refreshes of the keys.
	refreshMu sync.Mutex
	// saFlight shares one read of a ServiceAccount among its requests.
	saFlight  singleflight.Group
	mu        sync.Mutex
	issuer    string               // guarded by mu
	keys      jose.JSONWebKeySet   // guarded by mu
	fetchedAt time.Time            // guarded by mu; last successful refresh
	triedAt   time.Time            // guarded by mu; last refresh attempted
	audiences []string             // guarded by mu; configured and learnt
	learnt    []string             // guarded by mu; learnt, as stored
	sas       map[string]saEntry   // guarded by mu; keyed by namespace/name
	saTried   map[string]time.Time // guarded by mu; last read of a ServiceAccount
}

// saEntry is a ServiceAccount's UID as last read or learnt.
type saEntry struct {
	UID       string    `json:"uid"`
	CheckedAt time.Time `json:"checkedAt"`
	// Deleted is set when the cloud's copy had a deletionTimestamp.
	Deleted *time.Time `json:"deleted,omitempty"`
}

// New returns a Verifier; call Load to read what was stored.
func New(cfg Config) *Verifier {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v := &Verifier{cfg: cfg, sas: map[string]saEntry{}, saTried: map[string]time.Time{}}
	v.audiences = append(v.audiences, cfg.Audiences...)
	v.issuer = cfg.Issuer
	return v
}
