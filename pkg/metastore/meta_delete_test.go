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
