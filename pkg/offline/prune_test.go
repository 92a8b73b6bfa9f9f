package offline

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/caller"
)

// mapPruner is a Pruner over a map.
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
		return enc(Review{User: caller.User{Name: "u"}, Exp: exp, ReviewedAt: now.Add(-reviewed)})
	}
	answer := func(node bool, age time.Duration) []byte {
		return enc(getOnlyEntry{ContentType: "application/json", Body: []byte("{}"), StoredAt: now.Add(-age), Node: node})
	}
	store := mapPruner{
		ReviewPrefix + "expired":            review(now.Add(-time.Second), time.Minute),
		ReviewPrefix + "unexpired":          review(now.Add(time.Minute), 2*grace),
		ReviewPrefix + "no-exp-recent":      review(time.Time{}, grace/2),
		ReviewPrefix + "no-exp-old":         review(time.Time{}, 2*grace),
		ReviewPrefix + "no-user":            enc(Review{Exp: now.Add(time.Hour)}),
		ReviewPrefix + "garbage":            []byte("{not json"),
		DecisionPrefix + "recent":           enc(Decision{Allowed: true, At: now.Add(-grace / 2), Held: true}),
		DecisionPrefix + "before-held-rule": enc(Decision{Allowed: true, At: now.Add(-grace / 2)}),
		DecisionPrefix + "old":              enc(Decision{Allowed: true, At: now.Add(-2 * grace), Held: true}),
		DecisionPrefix + "no-time":          enc(Decision{Allowed: true, Held: true}),
		DecisionPrefix + "garbage":          []byte("\x00\x01"),
		GetOnlyPrefix + "node-recent":       answer(true, grace),
		GetOnlyPrefix + "node-unread":       answer(true, getOnlyRetention+time.Second),
		GetOnlyPrefix + "before-node-rule":  enc(map[string]any{"contentType": "application/json", "body": []byte("{}")}),
		GetOnlyPrefix + "garbage":           []byte("{not json"),
		"tokenrequest/other-owner-garbage":  []byte("{not json"),
	}
	n, err := PruneStored(context.Background(), store, now, grace)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{DecisionPrefix + "recent", GetOnlyPrefix + "node-recent", ReviewPrefix + "no-exp-recent",
		ReviewPrefix + "unexpired", "tokenrequest/other-owner-garbage"}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(store)); !slices.Equal(got, want) {
		t.Errorf("kept: got %v, want %v", got, want)
	}
	if n != 11 {
		t.Errorf("pruned: got %d, want 11", n)
	}
}
