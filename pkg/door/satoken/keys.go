package satoken

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	// KeyPrefix starts every store key of this package. What is stored
	// is public: the cloud's public keys and issuer, the API audiences
	// and ServiceAccount UIDs.
	KeyPrefix = "satoken/"
	// publishedKey holds the last keys and issuer read.
	publishedKey = KeyPrefix + "published"
	// audiencesKey holds the learnt API audiences.
	audiencesKey = KeyPrefix + "audiences"
	// serviceAccountPrefix starts the keys of ServiceAccount UIDs.
	serviceAccountPrefix = KeyPrefix + "serviceaccount/"
	// maxJWKSBytes bounds a key set read (bytes); kube's holds a few keys.
	maxJWKSBytes = 1 << 20
	// maxKeys bounds the keys of a set kept.
	maxKeys = 64
)

// storedPublished is publishedKey's record.
type storedPublished struct {
	Issuer    string          `json:"issuer"`
	JWKS      json.RawMessage `json:"jwks"`
	FetchedAt time.Time       `json:"fetchedAt"`
}

// parseKeySet keeps the public signing keys of a JWKS.
func parseKeySet(raw []byte) (jose.JSONWebKeySet, error) {
	if len(raw) > maxJWKSBytes {
		return jose.JSONWebKeySet{}, fmt.Errorf("key set of %d bytes exceeds %d", len(raw), maxJWKSBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return jose.JSONWebKeySet{}, fmt.Errorf("parse key set: %w", err)
	}
	var out jose.JSONWebKeySet
	for _, k := range set.Keys {
		if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") || len(out.Keys) == maxKeys {
			continue
		}
		out.Keys = append(out.Keys, k)
	}
	if len(out.Keys) == 0 {
		return jose.JSONWebKeySet{}, fmt.Errorf("key set holds no public signing key")
	}
	return out, nil
}

// Load reads what an earlier run stored. A damaged record is ignored: it
// only costs a refresh.
func (v *Verifier) Load(ctx context.Context) {
	if v.cfg.Store == nil {
		return
	}
	if raw, ok, err := v.cfg.Store.Get(ctx, publishedKey); err == nil && ok {
		var sp storedPublished
		if json.Unmarshal(raw, &sp) == nil {
			if set, err := parseKeySet(sp.JWKS); err == nil {
				v.mu.Lock()
				v.keys, v.fetchedAt = set, sp.FetchedAt
				if v.cfg.Issuer == "" {
					v.issuer = sp.Issuer
				}
				v.mu.Unlock()
			}
		}
	}
	if raw, ok, err := v.cfg.Store.Get(ctx, audiencesKey); err == nil && ok {
		var auds []string
		if json.Unmarshal(raw, &auds) == nil {
			v.mu.Lock()
			v.addAudiencesLocked(auds)
			v.mu.Unlock()
		}
	}
}

// RunnerOf is v's Run, asking connected whether the cloud is up, as a
// loop the daemon runs until ctx ends; nil without a verifier (v nil:
// verification is off).
func RunnerOf(v *Verifier, connected func() bool) func(context.Context) error {
	if v == nil {
		return nil
	}
	return func(ctx context.Context) error {
		v.Run(ctx, connected)
		return nil
	}
}

// Run refreshes the keys every keyRefreshInterval while connected says
// the cloud is up, until ctx ends; until a first read succeeds it tries
// again after keyRetryInterval, doubled each time.
func (v *Verifier) Run(ctx context.Context, connected func() bool) {
	if v.cfg.Fetch == nil {
		return
	}
	retry := keyRetryInterval
	for {
		wait := keyRefreshInterval
		if connected == nil || connected() {
			if err := v.refresh(ctx, 0); err != nil {
				v.cfg.Logger.Info("read the cloud's service-account signing keys", "err", err)
			}
		}
		if !v.hasKeys() {
			wait, retry = retry, min(2*retry, keyRefreshInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-v.cfg.Clock.After(wait):
		}
	}
}

func (v *Verifier) hasKeys() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.keys.Keys) > 0
}

// refresh reads the keys unless an attempt was made less than minAge
// ago, and stores them.
func (v *Verifier) refresh(ctx context.Context, minAge time.Duration) error {
	if v.cfg.Fetch == nil {
		return nil
	}
	v.refreshMu.Lock()
	defer v.refreshMu.Unlock()
	now := v.cfg.Clock.Now()
	v.mu.Lock()
	recent := !v.triedAt.IsZero() && now.Sub(v.triedAt) < minAge
	if !recent {
		v.triedAt = now
	}
	v.mu.Unlock()
	if recent {
		return nil
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	pub, err := v.cfg.Fetch(fctx)
	if err != nil {
		return fmt.Errorf("fetch keys: %w", err)
	}
	set, err := parseKeySet(pub.JWKS)
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.keys, v.fetchedAt = set, now
	if v.cfg.Issuer == "" && pub.Issuer != "" {
		v.issuer = pub.Issuer
	}
	issuer := v.issuer
	v.mu.Unlock()
	v.learnAudiences(ctx, pub.Audiences)
	v.put(ctx, publishedKey, storedPublished{Issuer: issuer, JWKS: pub.JWKS, FetchedAt: now})
	return nil
}

// put stores value as JSON; a failure only costs the offline use, so it
// is logged.
func (v *Verifier) put(ctx context.Context, key string, value any) {
	if v.cfg.Store == nil {
		return
	}
	raw, err := json.Marshal(value)
	if err == nil {
		err = v.cfg.Store.Put(ctx, key, raw)
	}
	if err != nil {
		v.cfg.Logger.Warn("store service-account verification data", "key", key, "err", err)
	}
}

// keysFor returns the issuer and the keys that may have signed a token
// naming kid (every key for an empty kid).
func (v *Verifier) keysFor(kid string) (string, []jose.JSONWebKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if kid == "" {
		return v.issuer, v.keys.Keys
	}
	return v.issuer, v.keys.Key(kid)
}

// Ready reports whether an issuer, signing keys and an API audience are
// known, so that the node's pods' tokens can be verified here.
func (v *Verifier) Ready() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.issuer != "" && len(v.keys.Keys) > 0 && len(v.audiences) > 0
}
