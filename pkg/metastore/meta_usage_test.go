package metastore

import (
	"context"
	"testing"
)

func TestMetaUsage(t *testing.T) {
	ctx := context.Background()
	path := testDBPath(t)
	s := MustOpen(t, path)
	for k, v := range map[string]string{"p/a": "12345", "p/b": "123", "pq": "1234567", "q/a": "1"} {
		if err := s.PutMeta(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix string
		want   MetaUsage
	}{
		{"p/", MetaUsage{Count: 2, Bytes: 8}},
		{"p", MetaUsage{Count: 3, Bytes: 15}},
		{"none/", MetaUsage{}},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			got, err := s.MetaUsage(ctx, tc.prefix)
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
			read, err := InspectMetaUsage(ctx, path, tc.prefix)
			if err != nil || len(read) != 1 || read[0] != tc.want {
				t.Errorf("read-only: got %+v, %v; want [%+v]", read, err, tc.want)
			}
		})
	}
}
