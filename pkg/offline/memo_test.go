package offline

import (
	"context"
	"testing"
	"time"
)

// stamped is an answer with a time and an optional expiry.
type stamped struct {
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
}

func newStampedMemo(store Store, grace time.Duration) *Memo[stamped] {
	return NewMemo(Policy[stamped]{Prefix: "test/", Store: store, MaxMem: 2, Grace: grace,
		Times: func(s stamped) (time.Time, time.Time) { return s.At, s.Until },
		Valid: func(s stamped) bool { return !s.At.IsZero() }})
}

func TestMemoGrace(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	m := newStampedMemo(nil, time.Hour)
	for _, tc := range []struct {
		name string
		v    stamped
		want bool
	}{
		{"within grace", stamped{At: now.Add(-time.Hour)}, true},
		{"past grace", stamped{At: now.Add(-time.Hour - time.Second)}, false},
		{"expiry ahead, grace past", stamped{At: now.Add(-48 * time.Hour), Until: now.Add(time.Second)}, true},
		{"expired, within grace", stamped{At: now, Until: now}, false},
		{"no time", stamped{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.InGrace(tc.v, now); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMemoStoreAndPrune(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	store := NewMemoryStore()
	m := newStampedMemo(store, time.Hour)
	m.Remember(ctx, "fresh", stamped{At: now})
	m.Remember(ctx, "stale", stamped{At: now.Add(-2 * time.Hour)})
	m.Keep("memory-only", stamped{At: now})
	if err := store.Put(ctx, "test/damaged", []byte("{")); err != nil {
		t.Fatal(err)
	}
	if _, ok := newStampedMemo(store, time.Hour).Stored(ctx, "memory-only"); ok {
		t.Error("Keep reached the store")
	}
	if _, ok := newStampedMemo(store, time.Hour).Stored(ctx, "damaged"); ok {
		t.Error("a damaged record was read as an answer")
	}
	n, err := m.Prune(ctx, store, now)
	if err != nil || n != 2 {
		t.Fatalf("prune: got %d, %v; want 2 (stale, damaged), nil", n, err)
	}
	if _, ok := newStampedMemo(store, time.Hour).Stored(ctx, "fresh"); !ok {
		t.Error("the fresh answer did not survive the prune")
	}
	m.Forget(ctx, "fresh")
	if _, ok := m.Mem("fresh"); ok {
		t.Error("forgotten answer still in memory")
	}
	if u, _ := store.MetaUsage(ctx, "test/"); u.Count != 0 {
		t.Errorf("after Forget: got %d stored, want 0", u.Count)
	}
}
