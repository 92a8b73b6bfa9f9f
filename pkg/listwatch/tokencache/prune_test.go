package tokencache

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
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

func TestPruneExpired(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	answer := func(exp time.Time) []byte {
		raw, err := json.Marshal(entry{Expires: exp, ContentType: "application/json", Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	store := mapPruner{
		keyPrefix + "uid/expired":     answer(now),
		keyPrefix + "uid/unexpired":   answer(now.Add(time.Second)),
		keyPrefix + "uid/garbage":     []byte("{"),
		"auth/decision/not-an-answer": []byte("{"),
	}
	n, err := PruneExpired(context.Background(), store, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"auth/decision/not-an-answer", keyPrefix + "uid/unexpired"}
	if got := slices.Sorted(maps.Keys(store)); !slices.Equal(got, want) || n != 2 {
		t.Errorf("got %d pruned, kept %v; want 2 pruned, kept %v", n, got, want)
	}
}
