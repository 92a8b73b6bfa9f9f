package offline

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestPruneExpired(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	answer := func(exp time.Time) []byte {
		raw, err := json.Marshal(entry{Expires: exp, ContentType: "application/json", Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, tt := range []struct {
		name string
		raw  []byte
		want bool
	}{
		{"expired now", answer(now), true},
		{"expired before", answer(now.Add(-time.Hour)), true},
		{"unexpired", answer(now.Add(time.Second)), false},
		{"damaged", []byte("{"), true},
		{"no expiry", []byte(`{"body":"e30="}`), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := mapPruner{TokenRequestPrefix + "uid/k": tt.raw}
			n, err := PruneExpired(context.Background(), store, now)
			if got := n == 1; err != nil || got != tt.want {
				t.Errorf("got past use %v, want %v", got, tt.want)
			}
		})
	}
}
