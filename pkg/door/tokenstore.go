package door

import (
	"context"
	"encoding/json"
)

func (a *Authenticator) memEntry(key string) (tokenEntry, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.mem[key]
	return e, ok
}

// storedEntry reads a review from the store; a damaged record counts as
// absent.
func (a *Authenticator) storedEntry(ctx context.Context, key string) (tokenEntry, bool) {
	if a.cfg.Store == nil {
		return tokenEntry{}, false
	}
	raw, ok, err := a.cfg.Store.Get(ctx, tokenKeyPrefix+key)
	if err != nil || !ok {
		return tokenEntry{}, false
	}
	var e tokenEntry
	if err := json.Unmarshal(raw, &e); err != nil || e.User.Name == "" {
		return tokenEntry{}, false
	}
	a.mu.Lock()
	a.storeMemLocked(key, e)
	a.mu.Unlock()
	return e, true
}

// remember keeps a successful review in memory and in the store. A store
// failure only costs the offline fallback, so it is logged.
func (a *Authenticator) remember(ctx context.Context, key string, e tokenEntry) {
	a.mu.Lock()
	a.storeMemLocked(key, e)
	a.mu.Unlock()
	if a.cfg.Store == nil {
		return
	}
	raw, err := json.Marshal(e)
	if err == nil {
		err = a.cfg.Store.Put(ctx, tokenKeyPrefix+key, raw)
	}
	if err != nil {
		a.cfg.Logger.Warn("store token review", "err", err)
	}
}

// forget drops a token the cloud no longer accepts.
func (a *Authenticator) forget(ctx context.Context, key string) {
	a.mu.Lock()
	delete(a.mem, key)
	a.mu.Unlock()
	if a.cfg.Store == nil {
		return
	}
	if err := a.cfg.Store.Delete(ctx, tokenKeyPrefix+key); err != nil {
		a.cfg.Logger.Warn("forget token review", "err", err)
	}
}

func (a *Authenticator) storeMemLocked(key string, e tokenEntry) {
	if len(a.mem) >= maxCachedTokens {
		clear(a.mem)
	}
	a.mem[key] = e
}
