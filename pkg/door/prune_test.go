package door

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// mapPruner is a StorePruner over a map.
type mapPruner map[string][]byte

func (m mapPruner) PruneMeta(_ context.Context, prefix string, dead func([]byte) bool) (int, error) {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && dead(v) {
			delete(m, k)
			n++
		}
	}
	return n, nil
}

func TestPruneStored(t *testing.T) {
	const grace = time.Hour
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	enc := func(v any) []byte {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	review := func(exp time.Time, reviewed time.Duration) []byte {
		return enc(tokenEntry{User: User{Name: "u"}, Exp: exp, ReviewedAt: now.Add(-reviewed)})
	}
	store := mapPruner{
		tokenKeyPrefix + "expired":         review(now.Add(-time.Second), time.Minute),
		tokenKeyPrefix + "unexpired":       review(now.Add(time.Minute), 2*grace),
		tokenKeyPrefix + "no-exp-recent":   review(time.Time{}, grace/2),
		tokenKeyPrefix + "no-exp-old":      review(time.Time{}, 2*grace),
		tokenKeyPrefix + "no-user":         enc(tokenEntry{Exp: now.Add(time.Hour)}),
		tokenKeyPrefix + "garbage":         []byte("{not json"),
		decisionKeyPrefix + "recent":       enc(decision{Allowed: true, At: now.Add(-grace / 2)}),
		decisionKeyPrefix + "old":          enc(decision{Allowed: true, At: now.Add(-2 * grace)}),
		decisionKeyPrefix + "no-time":      enc(decision{Allowed: true}),
		decisionKeyPrefix + "garbage":      []byte("\x00\x01"),
		"tokenrequest/other-owner-garbage": []byte("{not json"),
	}
	n, err := PruneStored(context.Background(), store, now, grace)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{decisionKeyPrefix + "recent", tokenKeyPrefix + "no-exp-recent", tokenKeyPrefix + "unexpired",
		"tokenrequest/other-owner-garbage"}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(store)); !slices.Equal(got, want) {
		t.Errorf("kept: got %v, want %v", got, want)
	}
	if n != 7 {
		t.Errorf("pruned: got %d, want 7", n)
	}
}
