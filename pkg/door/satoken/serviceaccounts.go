package satoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// checkServiceAccount checks the token's ServiceAccount UID against the
// copy the node holds: read from the cloud while online (at most every
// serviceAccountRecheck), learnt from TokenReviews, stored for offline
// use. A ServiceAccount never seen is not verified here.
func (v *Verifier) checkServiceAccount(ctx context.Context, k kubernetesClaims, now time.Time, online bool) error {
	key := k.Namespace + "/" + k.Svcacct.Name
	e, ok := v.serviceAccount(ctx, key)
	if online && v.cfg.ServiceAccounts != nil && (!ok || now.Sub(e.CheckedAt) >= serviceAccountRecheck) {
		// Concurrent first requests of one ServiceAccount share one read.
		got, err, _ := v.saFlight.Do(key, func() (any, error) {
			if !v.mayRead(key, now) {
				return nil, errReadRecently
			}
			return v.readServiceAccount(ctx, k.Namespace, k.Svcacct.Name, now)
		})
		switch {
		case err == nil:
			e, ok = got.(saEntry), true
		case !errors.Is(err, errReadRecently):
			v.cfg.Logger.Info("read service account", "namespace", k.Namespace, "name", k.Svcacct.Name, "err", err)
		}
	}
	switch {
	case !ok:
		return fmt.Errorf("%w: service account %s unknown on the node", ErrNotLocal, key)
	case e.UID != k.Svcacct.UID && online:
		// The copy may be older than the token: let the cloud decide.
		return fmt.Errorf("%w: service account %s UID differs from the node's copy", ErrNotLocal, key)
	case e.UID != k.Svcacct.UID:
		return fmt.Errorf("%w: service account UID (%s) does not match the token's (%s)", ErrInvalid, e.UID, k.Svcacct.UID)
	case deletedBefore(e.Deleted, now):
		return fmt.Errorf("%w: service account %s has been deleted", ErrInvalid, key)
	}
	return nil
}

// errReadRecently is returned instead of reading a ServiceAccount again
// within serviceAccountRecheck.
var errReadRecently = errors.New("service account read recently")

// serviceAccount is the held copy of key's ServiceAccount, from memory or
// the store.
func (v *Verifier) serviceAccount(ctx context.Context, key string) (saEntry, bool) {
	v.mu.Lock()
	e, ok := v.sas[key]
	v.mu.Unlock()
	if ok || v.cfg.Store == nil {
		return e, ok
	}
	raw, ok, err := v.cfg.Store.Get(ctx, serviceAccountPrefix+key)
	if err != nil || !ok || json.Unmarshal(raw, &e) != nil || e.UID == "" {
		return saEntry{}, false
	}
	v.remember(key, e)
	return e, true
}

// readServiceAccount reads a ServiceAccount from the cloud and keeps its
// UID.
func (v *Verifier) readServiceAccount(ctx context.Context, ns, name string, now time.Time) (saEntry, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	sa, err := v.cfg.ServiceAccounts(rctx, ns, name)
	if err != nil {
		return saEntry{}, err
	}
	e := saEntry{UID: sa.UID, CheckedAt: now, Deleted: sa.DeletionTimestamp}
	v.keep(ctx, ns+"/"+name, e)
	return e, nil
}

// mayRead reports whether key's ServiceAccount was not read (or tried)
// within serviceAccountRecheck, and notes a read now: a ServiceAccount the
// node may not read costs one refused read per interval.
func (v *Verifier) mayRead(key string, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if at, ok := v.saTried[key]; ok && now.Sub(at) < serviceAccountRecheck {
		return false
	}
	if len(v.saTried) >= maxServiceAccounts {
		clear(v.saTried)
	}
	v.saTried[key] = now
	return true
}

func (v *Verifier) remember(key string, e saEntry) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.sas) >= maxServiceAccounts {
		clear(v.sas)
	}
	v.sas[key] = e
}

// keep remembers e and stores it.
func (v *Verifier) keep(ctx context.Context, key string, e saEntry) {
	v.remember(key, e)
	v.put(ctx, serviceAccountPrefix+key, e)
}

// Learn records what a TokenReview the cloud answered for a service
// account's token teaches: its status.audiences are API audiences (the
// review named none, so the cloud intersected the token's with its own),
// and the user's UID is its ServiceAccount's UID. Other users teach
// nothing. Call it only with the cloud's
// answer for an authenticated token.
func (v *Verifier) Learn(ctx context.Context, username, uid string, audiences []string) {
	ns, name, err := serviceaccount.SplitUsername(username)
	if err != nil {
		return // another authenticator's user: its audiences are its own
	}
	v.learnAudiences(ctx, audiences)
	if uid == "" {
		return
	}
	key := ns + "/" + name
	if e, ok := v.serviceAccount(ctx, key); ok && e.UID == uid {
		return
	}
	v.keep(ctx, key, saEntry{UID: uid, CheckedAt: v.cfg.Clock.Now()})
}

func (v *Verifier) learnAudiences(ctx context.Context, audiences []string) {
	v.mu.Lock()
	before := len(v.learnt)
	v.addAudiencesLocked(audiences)
	changed := len(v.learnt) != before
	learnt := slices.Clone(v.learnt)
	v.mu.Unlock()
	if changed {
		v.put(ctx, audiencesKey, learnt)
	}
}

// addAudiencesLocked adds learnt audiences; only these are stored, so a
// configured audience removed from the flags is forgotten.
func (v *Verifier) addAudiencesLocked(audiences []string) {
	for _, a := range audiences {
		if a != "" && !slices.Contains(v.audiences, a) && len(v.learnt) < maxAudiences {
			v.audiences = append(v.audiences, a)
			v.learnt = append(v.learnt, a)
		}
	}
}
