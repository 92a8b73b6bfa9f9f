package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Policy says how a Memo keeps one kind of answer.
type Policy[T any] struct {
	// Prefix starts the store keys of the kind (see keys.go).
	Prefix string
	// Store keeps answers durably; nil keeps them in memory only.
	Store Store
	// MaxMem bounds the answers kept in memory (entries); the memory is
	// emptied when full, which only costs fresh questions. 0 keeps none.
	MaxMem int
	// Grace is how long after it was given an answer without an expiry
	// stays usable offline.
	Grace time.Duration
	// Times are when an answer was given and when it stops being usable
	// whatever the grace (zero: no expiry).
	Times func(T) (at, until time.Time)
	// Valid is false for a damaged answer, which counts as absent and is
	// pruned; nil accepts whatever decodes.
	Valid func(T) bool
	// What names the kind in logs.
	What   string
	Logger *slog.Logger
}

// Memo keeps one kind of answer of the cloud: the recent ones in memory,
// the durable ones in a Store under the kind's prefix, each usable within
// its grace (or until its expiry) and pruned once past use. Every kind of
// stored answer goes through one. Safe for concurrent use.
type Memo[T any] struct {
	p   Policy[T]
	mu  sync.Mutex
	mem map[string]T // guarded by mu; keyed like the store, without the prefix
}

// NewMemo returns an empty Memo with policy p.
func NewMemo[T any](p Policy[T]) *Memo[T] {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	return &Memo[T]{p: p, mem: map[string]T{}}
}

// Mem returns the answer at key kept in memory.
func (m *Memo[T]) Mem(key string) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.mem[key]
	return v, ok
}

// Stored reads the answer at key from the store and keeps it in memory; a
// damaged record counts as absent.
func (m *Memo[T]) Stored(ctx context.Context, key string) (T, bool) {
	var zero T
	if m.p.Store == nil {
		return zero, false
	}
	raw, ok, err := m.p.Store.Get(ctx, m.p.Prefix+key)
	if err != nil || !ok {
		return zero, false
	}
	v, ok := m.decode(raw)
	if !ok {
		return zero, false
	}
	m.Keep(key, v)
	return v, true
}

// Keep keeps v in memory only.
func (m *Memo[T]) Keep(key string, v T) {
	if m.p.MaxMem <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.mem) >= m.p.MaxMem {
		clear(m.mem)
	}
	m.mem[key] = v
}

// Remember keeps v in memory and in the store. A store failure only costs
// the offline fallback, so it is logged.
func (m *Memo[T]) Remember(ctx context.Context, key string, v T) {
	m.Keep(key, v)
	if m.p.Store == nil {
		return
	}
	if err := m.put(ctx, key, v); err != nil {
		m.p.Logger.Warn("store "+m.p.What, "err", err)
	}
}

func (m *Memo[T]) put(ctx context.Context, key string, v T) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return m.p.Store.Put(ctx, m.p.Prefix+key, raw)
}

// Forget drops the answer at key from memory and the store.
func (m *Memo[T]) Forget(ctx context.Context, key string) {
	m.mu.Lock()
	delete(m.mem, key)
	m.mu.Unlock()
	if m.p.Store == nil {
		return
	}
	if err := m.p.Store.Delete(ctx, m.p.Prefix+key); err != nil {
		m.p.Logger.Warn("forget "+m.p.What, "err", err)
	}
}

// InGrace reports whether v may stand in for the cloud at now: before its
// expiry when it has one, else within the grace after it was given.
func (m *Memo[T]) InGrace(v T, now time.Time) bool {
	at, until := m.p.Times(v)
	if !until.IsZero() {
		return now.Before(until)
	}
	return !at.IsZero() && now.Sub(at) <= m.p.Grace
}

// Prune deletes the stored answers past use at now (out of grace, or
// damaged) through p, and returns how many.
func (m *Memo[T]) Prune(ctx context.Context, p Pruner, now time.Time) (int, error) {
	return p.PruneMeta(ctx, m.p.Prefix, func(raw []byte) bool {
		v, ok := m.decode(raw)
		return !ok || !m.InGrace(v, now)
	})
}

func (m *Memo[T]) decode(raw []byte) (T, bool) {
	var v T
	if json.Unmarshal(raw, &v) != nil || (m.p.Valid != nil && !m.p.Valid(v)) {
		var zero T
		return zero, false
	}
	return v, true
}
