package metastore

import (
	"context"
	"errors"
	"testing"
)

func TestDeleteMeta(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t, testDBPath(t))
	if err := s.PutMeta(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second delete finds nothing
		if err := s.DeleteMeta(ctx, "k"); err != nil {
			t.Fatalf("DeleteMeta #%d: got %v, want nil", i+1, err)
		}
	}
	if _, err := s.GetMeta(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetMeta after delete: got %v, want ErrNotFound", err)
	}
}

func TestDeleteMetaPrefix(t *testing.T) {
	ctx := context.Background()
	s := MustOpen(t, testDBPath(t))
	for _, k := range []string{"tok/uid-1/a", "tok/uid-1/b", "tok/uid-10/a", "tok/uid-2/a"} {
		if err := s.PutMeta(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteMetaPrefix(ctx, "tok/uid-1/"); err != nil {
		t.Fatalf("DeleteMetaPrefix: %v", err)
	}
	for k, want := range map[string]bool{"tok/uid-1/a": false, "tok/uid-1/b": false, "tok/uid-10/a": true, "tok/uid-2/a": true} {
		_, err := s.GetMeta(ctx, k)
		if got := err == nil; got != want {
			t.Errorf("%s present: got %v, want %v", k, got, want)
		}
	}
	if err := s.DeleteMetaPrefix(ctx, ""); err == nil {
		t.Errorf("empty prefix: got nil, want an error")
	}
}
