package metastore

import (
	"context"
	"maps"
	"slices"
	"testing"
)

// MetaWithPrefix returns exactly the keys under the prefix, with values.
func TestMetaWithPrefix(t *testing.T) {
	s := MustOpen(t, testDBPath(t))
	ctx := context.Background()
	for k, v := range map[string]string{"ns/a": "1", "ns/b": "2", "nsx": "3", "other/ns/c": "4"} {
		if err := s.PutMeta(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.MetaWithPrefix(ctx, "ns/")
	if err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"ns/a", "ns/b"}) || string(got["ns/b"]) != "2" {
		t.Errorf("got %v, want ns/a and ns/b with their values", got)
	}
}
